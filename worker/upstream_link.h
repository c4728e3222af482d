/*
 * upstream_link.h - the kernel's line to code mode (the front's
 * upstream.h): a socketpair whose kernel end the kernel inherits
 * (CODEEXEC_UPSTREAM_FD), so that it works in every network mode, a
 * seccomp kernel's included, and no network is needed for it.
 *
 * The kernel writes requests, each a 4-byte big-endian length and that
 * many bytes of JSON (at most UPSTREAM_LINK_MAX) with an integer "seq";
 * the worker forwards each as UPSTREAM_CALL of the execution in flight
 * (one outside an execution is answered here with an error) and hands
 * each UPSTREAM_REPLY of that execution back as a memfd holding the JSON,
 * passed with one byte by SCM_RIGHTS: the worker never blocks on a kernel
 * that does not read. A kernel that breaks the framing loses its line.
 * kernel.c makes the line when it spawns a kernel of a START with
 * upstreams and closes it with the kernel (kernel_upstream_close).
 */
#ifndef WORKER_UPSTREAM_LINK_H
#define WORKER_UPSTREAM_LINK_H

#include "ipc.h"

struct wstate;
struct kernel;

/* The largest request a kernel may send, in bytes. */
#define UPSTREAM_LINK_MAX (1024 * 1024)
/* The environment variable that names the kernel's end. */
#define UPSTREAM_LINK_ENV "CODEEXEC_UPSTREAM_FD"

/* The kernel's end is readable: forward what it asked. */
void upstream_link_read(struct wstate *w);
/* UPSTREAM_REPLY `m` from the supervisor. */
void upstream_link_reply(struct wstate *w, struct ipc_msg *m);
#endif
