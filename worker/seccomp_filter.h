/*
 * seccomp_filter.h - the seccomp rules of kernel_network_mode seccomp.
 *
 * Built three times: into codeexec-seccomp.so, which the isolated Python
 * startup of a seccomp ipykernel loads and calls when the worker says the
 * kernel is ready (see sandbox_seccomp.c and doc/README.privsep for why
 * that filter is installed from inside the kernel); into the worker, which
 * installs the same rules in any other kernel between fork and exec
 * (sandbox_seccomp_gate.c); and into the unit test.
 */
#ifndef WORKER_SECCOMP_FILTER_H
#define WORKER_SECCOMP_FILTER_H

#include <stddef.h>

#include <linux/filter.h>

/*
 * Make the calling process undumpable, install the filter on every thread
 * of it (TSYNC, irreversible, inherited by children; sets no_new_privs),
 * then check that no open descriptor is a non-Unix socket. Returns 0, or
 * -1 with a message in why[why_len].
 */
int codeexec_seccomp_lock(char *why, size_t why_len);
/*
 * The same rules as BPF, for a kernel filtered before its exec, in two
 * filters: gate 0, every rule but the gated ones; gate 1, the gated ones
 * (socket of another family than AF_UNIX, bind, listen) as
 * SECCOMP_RET_USER_NOTIF, which the worker answers until the kernel is
 * ready and then refuses for good by closing the listener.
 * Fills *prog (caller frees prog->filter); 0, or -1 with why[why_len].
 */
int seccomp_filter_export(int gate, struct sock_fprog *prog, char *why, size_t why_len);

#endif
