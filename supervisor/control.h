/*
 * control.h - the operator's control socket, runtime_dir/codeexecd.sock.
 *
 * A Unix stream socket, mode 0600, so only the daemon's user (and root)
 * may use it. A client sends one line of JSON and gets one line back:
 * {"cmd":"status"}, {"cmd":"sessions"}, {"cmd":"close","session":ID}.
 * Served by the main loop, one short exchange at a time.
 */
#ifndef SUPERVISOR_CONTROL_H
#define SUPERVISOR_CONTROL_H

#include <json-c/json.h>

struct config;

/* Create and listen on the socket. Returns its fd, or -1 (logged). */
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
