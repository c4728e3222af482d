/*
 * control_proto.h - the protocol of the operator's control socket, the
 * one header the daemon (supervisor/control.c) and codeexecctl
 * (ctl/control.c) share. One line of JSON each way, then the daemon
 * closes:
 *
 *   {"cmd":"status"}              -> {"status", "name", "version", "pid", ...}
 *   {"cmd":"sessions"}            -> {"sessions": [...]}
 *   {"cmd":"close","session":ID}  -> {"closed": true}
 *   {"cmd":"drain","on":BOOL}     -> {"draining": BOOL, "sessions": N}
 *   anything refused              -> {"error": TEXT}
 *
 * A request may say which version it speaks ("protocol":
 * CONTROL_PROTO_VERSION; codeexecctl always does). A daemon of another
 * version answers only {"error": TEXT, "protocol": ITS_VERSION}, and
 * codeexecctl refuses it. A request without "protocol" (a line written
 * by hand or by a script) is taken as this version. Bump the version when
 * a request or an answer changes in a way the other side would misread.
 */
#ifndef COMMON_CONTROL_PROTO_H
#define COMMON_CONTROL_PROTO_H

#define CONTROL_PROTO_VERSION 1

/* The socket: runtime_dir/CONTROL_SOCKET_DIR/CONTROL_SOCKET_FILE. */
#define CONTROL_SOCKET_DIR "control"
#define CONTROL_SOCKET_FILE "codeexecd.sock"

/* Members of a request. */
#define CONTROL_KEY_CMD "cmd"
#define CONTROL_KEY_PROTOCOL "protocol"
#define CONTROL_KEY_SESSION "session"
#define CONTROL_KEY_ON "on"
/* Members of an answer, besides status's report. */
#define CONTROL_KEY_ERROR "error"
#define CONTROL_KEY_SESSIONS "sessions"
#define CONTROL_KEY_CLOSED "closed"
#define CONTROL_KEY_DRAINING "draining"

/* The requests. */
#define CONTROL_CMD_STATUS "status"
#define CONTROL_CMD_SESSIONS "sessions"
#define CONTROL_CMD_CLOSE "close"
#define CONTROL_CMD_DRAIN "drain"

#endif
