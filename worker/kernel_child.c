/* kernel_child.c - see kernel_child.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "kernel_child.h"

/* The signals the worker catches or ignores: the kernel gets them back at default. */
static const int reset_signals[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD};

static int
fail_at(int *stage, int s)
{
	*stage = s;
	return -1;
}

/* Signals at default and none blocked, as a freshly exec'd process has them. */
static void
reset_signal_state(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof(reset_signals) / sizeof(reset_signals[0]); i++)
		sigaction(reset_signals[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* 0, 1, 2 and exactly the descriptors the kernel inherits, the rest close-on-exec. */
static int
keep_descriptors(const struct kernel_child *c)
{
	const struct sandbox_launch *ln = c->ln;

	if (dup2(c->in_fd, 0) == -1 || dup2(c->out_fd, 1) == -1 || dup2(c->out_fd, 2) == -1)
		return -1;
	/* Whatever was not opened O_CLOEXEC, the kernel still does not inherit... */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	/* ...but for its connection file, its runtime directory and what the sandbox passes on. */
	if (fcntl(c->conn_fd, F_SETFD, 0) == -1 || fcntl(c->dir_fd, F_SETFD, 0) == -1 ||
	    (ln->pass_fd >= 0 && fcntl(ln->pass_fd, F_SETFD, 0) == -1))
		return -1;
	for (int i = 0; i < ln->n_unix_fds; i++)
		if (fcntl(ln->unix_fds[i], F_SETFD, 0) == -1)
			return -1;
	return 0;
}

int
kernel_child_enter(const struct kernel_child *c, int *stage)
{
	if (setsid() == -1)
		return fail_at(stage, KERNEL_CHILD_SETUP);
	/* If its maker dies without cleaning up, the kernel must not outlive it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		return fail_at(stage, KERNEL_CHILD_SETUP);
	if (getppid() != c->parent) {
		errno = ESRCH;
		return fail_at(stage, KERNEL_CHILD_SETUP);
	}
	reset_signal_state();
	if (keep_descriptors(c) == -1)
		return fail_at(stage, KERNEL_CHILD_SETUP);
	if (sandbox_child(c->sb, c->ln, stage) == -1)
		return -1;
	/*
	 * The runtime directory again, as this mount namespace shows it, under
	 * the number the connection file names: the worker's descriptor is of
	 * the host's tree, whose ".." would lead past the sandbox's covers to
	 * every other kernel's runtime directory.
	 */
	int here = open(c->runtime_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (here == -1 || dup2(here, c->dir_fd) == -1)
		return fail_at(stage, KERNEL_CHILD_SETUP);
	close(here);
	if (chdir(c->ln->start_dir ? c->ln->start_dir : c->cwd) == -1)
		return fail_at(stage, KERNEL_CHILD_CHDIR);
	return 0;
}
