/*
 * control.h - the operator's control socket, runtime_dir/control/codeexecd.sock.
 *
 * A client sends one line of JSON and gets one line back, as
 * common/control_proto.h says (requests, answers, protocol version).
 * Served by the main loop, one short exchange at a time.
 *
 * Who may connect is decided by the peer's uid (SO_PEERCRED) only: root,
 * members of control_group, and the daemon's own user when kernels do not
 * share it (kernel_uid_range). A uid any kernel may run under is refused.
 * The socket's directory is made before privileges are dropped, mode 0700
 * (0750 for control_group), so kernels of other ids cannot even reach it.
 */
#ifndef SUPERVISOR_CONTROL_H
#define SUPERVISOR_CONTROL_H

#include <json-c/json.h>

struct config;

/* Create and listen on the socket, before privileges are dropped. Returns
 * its fd, or -1 (logged); fatal when control_group is unusable. */
int control_open(const struct config *cfg);
/* Accept and answer one client of listening socket `fd`. Lock not held. */
void control_accept(int fd);
/* The status report (also for SIGUSR1). Lock held; caller owns. */
struct json_object *control_status(void);
/* Remove the socket file. */
void control_close(int fd);
/* Nonzero if the socket file control_open made is still in place. */
int control_present(void);

#endif
