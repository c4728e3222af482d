/*
 * egress_forward.h - an isolated kernel's way to the egress proxy: a
 * process of the kernel's network namespace (but outside its pid and
 * mount namespaces, forked by the waiter of sandbox_isolated.c) that
 * accepts on 127.0.0.1:NET_EGRESS_PORT there and relays each connection,
 * byte for byte, to the session's proxy socket. The kernel sees only a
 * loopback port; the socket's path is hidden from it by the covers, and
 * the socket is its session's alone (the parent's egress.c makes it the
 * kernel's uid's, mode 0600). System calls only, no allocation: it is
 * forked from a child of the multi-threaded worker. It holds no capability
 * (not even in the namespace it is root of) and sets no_new_privs.
 */
#ifndef WORKER_EGRESS_FORWARD_H
#define WORKER_EGRESS_FORWARD_H

/*
 * In the kernel's network namespace, as root of its user namespace: a
 * listening socket on 127.0.0.1:NET_EGRESS_PORT. The descriptor, or -1
 * with errno.
 */
int egress_forward_listen(void);

/*
 * Fork the forwarder serving `lfd`, connecting to `name` in the directory
 * `dir`; it dies with its parent. 0, or -1 with errno. The caller keeps
 * (and closes) its own descriptors.
 */
int egress_forward_start(int lfd, int dir, const char *name);

#endif
