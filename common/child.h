/*
 * child.h - run a program as a child with a deadline: the one runner of
 * the build steps (builder.c), the matplotlib backend probe (mpl_check.c)
 * and the tools' import probe (toolreg_check.c), all run by the parent.
 *
 * The child is in a process group of its own, gets SIGKILL if the daemon
 * dies (PR_SET_PDEATHSIG, checked against a parent already gone), has
 * stdin from /dev/null or the caller's input, stdout and stderr to a pipe
 * the caller reads through a callback (or to /dev/null), and runs in the
 * directory the caller names with the caller's environment. When it has
 * exited and its output is closed, or STRAGGLER_GRACE_S after its exit
 * while something it left keeps the output open, or at the deadline, the
 * whole group is killed and the child reaped.
 */
#ifndef COMMON_CHILD_H
#define COMMON_CHILD_H

#include <stddef.h>
#include <time.h>

/* Seconds a child's leftover processes may keep its output open after it exits. */
#define CHILD_STRAGGLER_GRACE_S 2

/* What to run. All borrowed. */
struct child_spec {
	char *const *argv;	/* argv[0] a path; no PATH search */
	char **envp;
	const char *dir;	/* the child's working directory */
	const char *input;	/* written to stdin, which then closes; NULL: /dev/null */
	int quiet;		/* stdout and stderr to /dev/null, not to on_output */
	time_t deadline;	/* time(NULL) by which the group is killed */
	/* Each piece of the child's output, as it comes; may be NULL. */
	void (*on_output)(void *arg, const char *data, size_t len);
	void *arg;
	const char *exec_error;	/* written to the output when execve fails; NULL: nothing */
};

/*
 * Run s to its end. The wait status, with *timed_out set when the
 * deadline killed the child before it exited; -1 with errno when no child
 * could be started (pipe, fork).
 */
int child_run(const struct child_spec *s, int *timed_out);

#endif
