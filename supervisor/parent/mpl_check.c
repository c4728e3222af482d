/* mpl_check.c - see mpl_check.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "fs_tree.h"
#include "kernel_env.h"
#include "log.h"
#include "mpl_check.h"
#include "xmalloc.h"

/* Bytes of the interpreter's output kept for the message (its end). */
#define OUTPUT_KEEP 8192

/* What the interpreter runs: switch_backend imports the backend's module. */
static const char probe[] = "import sys\n"
			    "import matplotlib.pyplot\n"
			    "matplotlib.pyplot.switch_backend(sys.argv[1])\n";

/*
 * The child: its own process group, killed with the daemon, in `home`,
 * output to `out`. Only async-signal-safe calls between fork and exec.
 */
static void __attribute__((noreturn))
exec_probe(char *const argv[], char **envp, const char *home, int out, pid_t parent)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	int null = open("/dev/null", O_RDWR);
	if (null == -1 || dup2(null, 0) == -1 || dup2(out, 1) == -1 || dup2(out, 2) == -1 ||
	    chdir(home) == -1)
		_exit(127);
	execve(argv[0], argv, envp);
	static const char msg[] = "cannot execute the environment's python\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(127);
}

/*
 * Read the child's output into `out` (its last OUTPUT_KEEP bytes) until it
 * closes or the deadline passes; then end the group and reap. The wait
 * status, or -1 on timeout.
 */
static int
collect(pid_t pid, int fd, struct buf *out)
{
	time_t deadline = time(NULL) + MPL_CHECK_TIMEOUT_S;
	char chunk[4096];
	int status, timed_out = 0;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (time(NULL) >= deadline) {
			timed_out = 1;
			break;
		}
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_add(out, chunk, (size_t)n);
		if (out->len > OUTPUT_KEEP)
			buf_consume(out, out->len - OUTPUT_KEEP);
	}
	/* The whole group: whatever the probe left running goes with it. */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return timed_out ? -1 : status;
}

/* The last non-empty line of `b` (NUL-terminated by the caller), in place. */
static const char *
last_line(struct buf *b)
{
	char *s = b->data;
	size_t len = strlen(s);

	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
		s[--len] = '\0';
	char *nl = strrchr(s, '\n');
	return nl ? nl + 1 : s;
}

/* Run the probe as `python`; the message of a failure into why. */
static int
run_probe(const struct config *cfg, const char *python, char **envp, const char *home,
	  char *why, size_t why_len)
{
	char *argv[] = {(char *)python, (char *)"-c", (char *)probe, cfg->matplotlib_backend,
			NULL};
	int pipefd[2];
	struct buf out;

	if (pipe2(pipefd, O_CLOEXEC) == -1)
		return err_set(why, why_len, "matplotlib_backend check: pipe: %s",
			       strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == -1) {
		close(pipefd[0]);
		close(pipefd[1]);
		return err_set(why, why_len, "matplotlib_backend check: fork: %s",
			       strerror(errno));
	}
	if (pid == 0)
		exec_probe(argv, envp, home, pipefd[1], parent);
	setpgid(pid, pid); /* also here, so the kill in collect never misses */
	close(pipefd[1]);
	buf_init(&out);
	int status = collect(pid, pipefd[0], &out);
	close(pipefd[0]);
	buf_add(&out, "", 1);
	int rc = 0;
	if (status == -1)
		rc = err_set(why, why_len,
			     "matplotlib_backend \"%s\": %s did not load it within %d s",
			     cfg->matplotlib_backend, python, MPL_CHECK_TIMEOUT_S);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		rc = err_set(why, why_len,
			     "matplotlib_backend \"%s\": the environment's python (%s) cannot load "
			     "it: %s",
			     cfg->matplotlib_backend, python,
			     out.len > 1 ? last_line(&out) : "it failed without a message");
	if (rc == -1 && out.len > 1)
		log_warnx("matplotlib_backend check: the interpreter said: %s", out.data);
	buf_free(&out);
	return rc;
}

int
mpl_check(const struct config *cfg, char *why, size_t why_len)
{
	const char *b = cfg->matplotlib_backend;

	if (strcmp(b, CONFIG_MPL_INLINE) == 0 || strcmp(b, CONFIG_MPL_NONE) == 0)
		return 0;
	const char *tmp = getenv("TMPDIR");
	char *home = xasprintf("%s/codeexecd-mpl.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(home) == NULL) {
		int rc = err_set(why, why_len, "matplotlib_backend check: mkdtemp %s: %s", home,
				 strerror(errno));
		free(home);
		return rc;
	}
	/* A HOME of its own: matplotlib's caches land there and go with it. */
	struct json_object *env = kernel_env_build(cfg);
	kernel_env_session(cfg, env, home);
	char **envp = kernel_env_strings(env);
	char *python = kernel_env_python(cfg);

	log_info("checking matplotlib_backend %s with %s", b, python);
	int rc = run_probe(cfg, python, envp, home, why, why_len);
	if (fs_remove_tree(home) == -1)
		log_warn("matplotlib_backend check: remove %s", home);
	free(python);
	strv_free(envp);
	json_object_put(env);
	free(home);
	return rc;
}
