/*
 * relay.h - a sidecar's Unix socket (socket: true): a small
 * process, `codeexecd --sidecar-relay`, started by the parent as the
 * daemon's unprivileged user like the sidecar itself, that listens on
 * runtime_dir/sidecars/NAME.sock and copies each connection to and from
 * the sidecar's TCP port. Kernels whose network namespace has no route to
 * the host's loopback (isolated) reach the sidecar through it: a
 * filesystem socket belongs to no network namespace.
 *
 * It parses nothing it relays, holds no privilege, and is restarted by
 * the parent when it exits.
 */
#ifndef SUPERVISOR_RELAY_H
#define SUPERVISOR_RELAY_H

/*
 * What follows the socket's path in its broker's: a second socket where
 * each byte a client sends is answered by one byte carrying (SCM_RIGHTS)
 * a new connection to the sidecar. Seccomp kernels, which may connect()
 * nowhere, inherit a connection to it (worker_launch.c) and receive
 * their connections from it with recvmsg.
 */
#define RELAY_BROKER_SUFFIX ".fds"

/* The option that makes codeexecd a relay; argv: OPTION NAME PATH HOST PORT MODE FG. */
#define RELAY_OPTION "--sidecar-relay"

/* Run the relay of argv (as above) until killed; returns an exit status on error. */
int relay_main(int argc, char *argv[]);

#endif
