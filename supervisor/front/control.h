/*
 * control.h - the front's side of the operator's control socket,
 * runtime_dir/control/codeexecd.sock, which the privileged parent makes
 * (control_socket.h).
 *
 * A client sends one line of JSON and gets one line back, as
 * common/control_proto.h says (requests, answers, protocol version).
 * Served by the main loop, one short exchange at a time.
 *
 * Who may connect is decided by the peer's uid (SO_PEERCRED) only: root,
 * members of control_group, and the daemon's own user when kernels do not
 * share it (kernel_uid_range). A uid any kernel may run under is refused.
 */
#ifndef SUPERVISOR_CONTROL_H
#define SUPERVISOR_CONTROL_H

#include <json-c/json.h>

struct control_access;

/* Answer on the socket the parent made as `a` says (borrowed for the
 * front's lifetime). Before any other call. */
void control_init(const struct control_access *a);
/* Accept and answer one client of listening socket `fd`. Lock not held. */
void control_accept(int fd);
/* The status report (also for SIGUSR1). Lock held; caller owns. */
struct json_object *control_status(void);

#endif
