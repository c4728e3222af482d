/*
 * scfilter.h - what the daemon's two seccomp filters share: the front's
 * allow list (supervisor/front/front_filter.c) and the kernels' deny list
 * (worker/seccomp_filter.c). Both want the same attributes, the same
 * precise error for a rule libseccomp refuses, and the same load; their
 * rule tables stay with the process each protects.
 *
 * In libcommon.a for the programs; the seccomp shared object, built
 * position-independent and linked with nothing else, compiles this file
 * among its own sources.
 */
#ifndef COMMON_SCFILTER_H
#define COMMON_SCFILTER_H

#include <stddef.h>
#include <stdint.h>

#include <seccomp.h>

/*
 * A filter whose default is `def_action`, that kills the process on any
 * other architecture (i386 via int 0x80, x32 numbers), applies to every
 * thread (TSYNC) and sets no_new_privs. Caller owns (seccomp_release);
 * NULL with why set.
 */
scmp_filter_ctx scfilter_new(uint32_t def_action, char *why, size_t why_len);
/*
 * Add the rule `action` for syscall `nr` when its `nargs` comparisons
 * `arg` (borrowed) hold. 0, or -1 with why naming the syscall; the caller
 * still owns ctx.
 */
int scfilter_add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned nargs,
		 const struct scmp_arg_cmp *arg, char *why, size_t why_len);
/* Load ctx into the kernel and release it (consumed). 0, or -1 with why. */
int scfilter_load(scmp_filter_ctx ctx, char *why, size_t why_len);

#endif
