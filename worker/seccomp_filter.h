/*
 * seccomp_filter.h - the seccomp rules of kernel_network_mode seccomp.
 *
 * Built twice: into codeexec-seccomp.so, which the isolated Python startup
 * of a seccomp kernel loads and calls when the worker says the kernel is
 * ready (see sandbox_seccomp.c and doc/README.privsep for why the filter
 * is installed from inside the kernel), and into the unit test.
 */
#ifndef WORKER_SECCOMP_FILTER_H
#define WORKER_SECCOMP_FILTER_H

#include <stddef.h>

/*
 * Make the calling process undumpable, install the filter on every thread
 * of it (TSYNC, irreversible, inherited by children; sets no_new_privs),
 * then check that no open descriptor is a non-Unix socket. Returns 0, or
 * -1 with a message in why[why_len].
 */
int codeexec_seccomp_lock(char *why, size_t why_len);

#endif
