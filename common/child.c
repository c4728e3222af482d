/* child.c - see child.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

/*
 * The child side: its own group, killed with the daemon, stdin from `in`
 * (or /dev/null), output to `out` (or /dev/null), in s->dir. Only
 * async-signal-safe calls between fork and exec.
 */
static void __attribute__((noreturn))
exec_child(const struct child_spec *s, int in, int out, pid_t parent)
{
	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(127);
	int null = open("/dev/null", O_RDWR);
	if (null == -1)
		_exit(127);
	if (s->quiet)
		out = null;
	if (dup2(in != -1 ? in : null, 0) == -1 || dup2(out, 1) == -1 || dup2(out, 2) == -1 ||
	    chdir(s->dir) == -1)
		_exit(127);
	execve(s->argv[0], s->argv, s->envp);
	if (s->exec_error != NULL)
		(void)!write(2, s->exec_error, strlen(s->exec_error));
	_exit(127);
}

/* Close *fd if open, and mark it closed. */
static void
close_fd(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/*
 * Feed the input and read the output until the child has exited and its
 * output closed, its stragglers' grace is over, or the deadline. The wait
 * status; *exited says whether it was reaped.
 */
static int
watch(const struct child_spec *s, pid_t pid, int in, int out, int *exited, int *timed_out)
{
	const char *input = s->input;
	size_t left = input ? strlen(input) : 0;
	int status = 0, eof = 0;
	time_t exited_at = 0;
	char chunk[4096];

	*exited = 0;
	*timed_out = 0;
	if (left == 0)
		close_fd(&in);
	while (!(*exited && eof)) {
		struct pollfd pfd[2] = {{.fd = eof ? -1 : out, .events = POLLIN},
					{.fd = in, .events = POLLOUT}};
		int rc = poll(pfd, 2, eof ? 50 : 250);
		if (rc > 0 && pfd[0].revents) {
			ssize_t n = read(out, chunk, sizeof(chunk));
			if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
				eof = 1;
			if (n > 0 && s->on_output)
				s->on_output(s->arg, chunk, (size_t)n);
		}
		if (rc > 0 && pfd[1].revents) {
			ssize_t n = (pfd[1].revents & POLLOUT) ? write(in, input, left) : -1;
			if (n > 0) {
				input += n;
				left -= (size_t)n;
			}
			if (left == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
				close_fd(&in);
		}
		if (!*exited && waitpid(pid, &status, WNOHANG) == pid) {
			*exited = 1;
			exited_at = time(NULL);
		}
		if (*exited && time(NULL) - exited_at >= CHILD_STRAGGLER_GRACE_S)
			break;
		if (time(NULL) >= s->deadline) {
			*timed_out = !*exited;
			break;
		}
	}
	close_fd(&in);
	return status;
}

int
child_run(const struct child_spec *s, int *timed_out)
{
	int out[2], in[2] = {-1, -1}, exited;

	*timed_out = 0;
	if (pipe2(out, O_CLOEXEC) == -1)
		return -1;
	if (s->input != NULL && pipe2(in, O_CLOEXEC) == -1) {
		int e = errno;
		close(out[0]);
		close(out[1]);
		errno = e;
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		exec_child(s, in[0], out[1], parent);
	int e = errno;
	close(out[1]);
	close_fd(&in[0]);
	if (pid == -1) {
		close(out[0]);
		close_fd(&in[1]);
		errno = e;
		return -1;
	}
	setpgid(pid, pid); /* also here, so the kill below never misses */
	/* The input goes in as the child takes it, between reads of its output. */
	if (in[1] != -1)
		fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	/* A reader gone before its input is written is EPIPE, not the daemon's death. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	int status = watch(s, pid, in[1], out[0], &exited, timed_out);
	sigaction(SIGPIPE, &old, NULL);
	close(out[0]);
	/* The whole group: whatever the child left running goes with it. */
	kill(-pid, SIGKILL);
	if (!exited)
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
	return status;
}
