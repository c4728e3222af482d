/*
 * control_socket.h - the privileged parent makes the operator's control
 * socket, runtime_dir/control/codeexecd.sock, which the front answers on
 * (control.h), and makes it again when runtime_dir loses it
 * (runtime_watch.h).
 *
 * The socket's directory is made before privileges are dropped, mode 0700
 * (0750 for control_group), so kernels of other ids cannot even reach it.
 * Who may connect is worked out here too, for the front (control_access.h).
 */
#ifndef SUPERVISOR_CONTROL_SOCKET_H
#define SUPERVISOR_CONTROL_SOCKET_H

struct config;
struct control_access;

/* Create and listen on the socket, before privileges are dropped, and say
 * in *a where it is and who may use it. Returns its fd, or -1 (logged);
 * fatal when control_group is unusable. */
int control_open(const struct config *cfg, struct control_access *a);
/* Remove the socket file. */
void control_close(const struct control_access *a, int fd);
/* Nonzero if the socket file control_open made is still in place. */
int control_present(const struct control_access *a);

#endif
