/*
 * kernelpid.h - signal a worker's kernel only when it is provably that
 * worker's.
 *
 * A worker names its kernel's pid in READY; the supervisor, which holds
 * CAP_KILL when kernels run under other identities, must not take that on
 * faith. kernelpid_claim() accepts a pid only if it is a live child of the
 * worker that leads its own process group (the worker's kernel.c makes
 * every kernel a session leader), and pins it with a pidfd, so that a pid
 * reused later by an unrelated process is never signalled.
 */
#ifndef SUPERVISOR_KERNELPID_H
#define SUPERVISOR_KERNELPID_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Check that `pid` is a child of `parent` leading its own process group.
 * Returns 1 with *pidfd (caller closes) when it is; 0 with *pidfd = -1 when
 * no such process exists any more (it died: nothing to signal, and no
 * lie); -1 with why[why_len] when it is some other process (a protocol
 * violation) or cannot be checked.
 */
int kernelpid_claim(pid_t pid, pid_t parent, int *pidfd, char *why, size_t why_len);

/*
 * SIGKILL the process group of a claimed kernel `pid` while pidfd shows
 * the kernel itself has not been reaped (so `pid` still names its group),
 * and the kernel through the pidfd. Nothing when pidfd is -1.
 */
void kernelpid_kill(int pidfd, pid_t pid);

#endif
