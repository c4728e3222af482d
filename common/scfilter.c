/* scfilter.c - see scfilter.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scfilter.h"

/* Set once this process has a filter: see __lsan_is_turned_off below. */
static volatile int loaded;

#if defined(__SANITIZE_ADDRESS__)
/*
 * Sanitizer builds only (tests): LeakSanitizer checks at exit by stopping
 * the world from a tracer task (clone without CLONE_THREAD, prctl,
 * ptrace), which every filter of ours kills: the front's, the egress
 * proxy's (498 saw it die so at its exit). So a filtered process skips
 * that check; others keep it.
 */
int __lsan_is_turned_off(void);

int
__lsan_is_turned_off(void)
{
	return loaded;
}
#endif

scmp_filter_ctx
scfilter_new(uint32_t def_action, char *why, size_t why_len)
{
	scmp_filter_ctx ctx = seccomp_init(def_action);
	int rc;

	if (ctx == NULL) {
		snprintf(why, why_len, "seccomp_init failed");
		return NULL;
	}
	/* Other architectures would see other syscall numbers: kill outright. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) != 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1)) != 0) {
		snprintf(why, why_len, "seccomp_attr_set: %s", strerror(-rc));
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

int
scfilter_add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned nargs,
	     const struct scmp_arg_cmp *arg, char *why, size_t why_len)
{
	int rc = seccomp_rule_add_array(ctx, action, nr, nargs, arg);

	if (rc != 0) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		snprintf(why, why_len, "seccomp rule for %s: %s", name ? name : "?",
			 strerror(-rc));
		free(name);
		return -1;
	}
	return 0;
}

int
scfilter_load(scmp_filter_ctx ctx, char *why, size_t why_len)
{
	int rc = seccomp_load(ctx);

	seccomp_release(ctx);
	if (rc != 0) {
		/* With TSYNC, a positive value is the thread that could not sync. */
		snprintf(why, why_len, "seccomp_load: %s",
			 rc < 0 ? strerror(-rc) : "a thread could not be synchronized");
		return -1;
	}
	loaded = 1;
	return 0;
}
