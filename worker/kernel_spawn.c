/* kernel_spawn.c - see kernel_spawn.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "buf.h"
#include "envp.h"
#include "kernel_child.h"
#include "kernel_spawn.h"
#include "log.h"
#include "xmalloc.h"

#define PLACEHOLDER "{connection_file}"

/*
 * Never a file by name: every kernel of the same uid could read it, and
 * its path in argv, which all can read, named the runtime directory. Mode
 * 0600 and owned by the kernel's identity, because ipykernel reopens it to
 * write it back.
 */
int
kernel_spawn_conn_file(const char *ip, const char *key, const struct sandbox *sb)
{
	struct json_object *o = json_object_new_object();
	size_t len;
	int fd;

	json_object_object_add(o, "shell_port", json_object_new_int(KERNEL_PORT_SHELL));
	json_object_object_add(o, "iopub_port", json_object_new_int(KERNEL_PORT_IOPUB));
	json_object_object_add(o, "stdin_port", json_object_new_int(KERNEL_PORT_STDIN));
	json_object_object_add(o, "control_port", json_object_new_int(KERNEL_PORT_CONTROL));
	json_object_object_add(o, "hb_port", json_object_new_int(KERNEL_PORT_HB));
	json_object_object_add(o, "ip", json_object_new_string(ip));
	json_object_object_add(o, "key", json_object_new_string(key));
	json_object_object_add(o, "transport", json_object_new_string("ipc"));
	json_object_object_add(o, "signature_scheme", json_object_new_string("hmac-sha256"));
	json_object_object_add(o, "kernel_name", json_object_new_string(""));
	const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY, &len);

	fd = memfd_create("kernel.json", MFD_CLOEXEC);
	if (fd == -1) {
		log_warn("memfd_create for the connection file");
		goto out;
	}
	if (fchmod(fd, 0600) == -1 ||
	    (sb && sb->has_id && fchown(fd, sb->uid, sb->gid) == -1)) {
		log_warn("chmod/chown the connection file");
		close(fd);
		fd = -1;
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_warn("write the connection file");
			close(fd);
			fd = -1;
			goto out;
		}
		off += (size_t)n;
	}
out:
	json_object_put(o);
	return fd;
}

/*
 * The program to execve: argv0 itself if it holds a slash, else its first
 * match on the kernel's own PATH (not ours). Caller owns the result.
 */
static char *
resolve_program(const char *argv0, char **envp)
{
	const char *path = envp_get(envp, "PATH");

	if (strchr(argv0, '/') || *argv0 == '\0')
		return xstrdup(argv0);
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char *cand = xasprintf("%.*s/%s", (int)n, n ? path : ".", argv0);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += n + (path[n] == ':');
	}
	return xstrdup(argv0); /* execve reports ENOENT */
}

char **
kernel_spawn_argv(char **argv, const char *conn_path)
{
	size_t n = 0;

	while (argv[n])
		n++;
	char **out = xreallocarray(NULL, n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		struct buf b;
		const char *s = argv[i], *p;
		buf_init(&b);
		while ((p = strstr(s, PLACEHOLDER)) != NULL) {
			buf_add(&b, s, (size_t)(p - s));
			buf_adds(&b, conn_path);
			s = p + strlen(PLACEHOLDER);
		}
		buf_adds(&b, s);
		out[i] = buf_release(&b);
	}
	out[n] = NULL;
	return out;
}

/* In the child: report stage and errno on the exec-error pipe and exit. */
static void __attribute__((noreturn))
child_fail(int errfd, int stage, int err)
{
	int report[2] = {stage, err};
	ssize_t n = write(errfd, report, sizeof(report));
	(void)n;
	_exit(127);
}

/*
 * In the child, after fork: only async-signal-safe calls, because libzmq's
 * threads exist in the parent. Never returns.
 */
static void __attribute__((noreturn))
child_exec(const struct kernel_child *c, const char *prog, char **argv, char **envp, int errfd)
{
	int stage;

	if (kernel_child_enter(c, &stage) == -1)
		child_fail(errfd, stage, errno);
	execve(prog, c->ln->argv ? c->ln->argv : argv, c->ln->envp ? c->ln->envp : envp);
	child_fail(errfd, KERNEL_CHILD_EXEC, errno);
}

/* Say in why[why_len] how a child failed at `stage`; returns -1. */
static int
child_failure(int stage, int err, const char *prog, const char *cwd, char *why, size_t why_len)
{
	if (stage == KERNEL_CHILD_CHDIR)
		return err_set(why, why_len, "cannot start the kernel in %s: %s", cwd,
			       strerror(err));
	if (stage == KERNEL_CHILD_EXEC)
		return err_set(why, why_len, "cannot execute %s: %s", prog, strerror(err));
	if (stage >= SANDBOX_STAGE_CGROUP)
		return err_set(why, why_len, "%s: %s", sandbox_stage_text(stage), strerror(err));
	return err_set(why, why_len, "cannot set up the kernel process: %s", strerror(err));
}

pid_t
kernel_spawn(const struct kernel_spec *spec, const struct sandbox_launch *ln, char **argv,
	     int conn_fd, int dir_fd, int out_w, char *why, size_t why_len)
{
	int ep[2], devnull, report[2];
	sigset_t all, old;
	pid_t pid, parent = getpid();
	char *prog = resolve_program(ln->argv ? ln->argv[0] : argv[0], spec->envp);

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull == -1 || pipe2(ep, O_CLOEXEC) == -1) {
		err_set(why, why_len, "cannot spawn the kernel: %s", strerror(errno));
		if (devnull != -1)
			close(devnull);
		free(prog);
		return -1;
	}
	/* No handler of ours may run in the child between fork and exec. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		struct kernel_child c = {.sb = spec->sb, .ln = ln, .runtime_dir = spec->runtime_dir,
					 .cwd = spec->cwd, .conn_fd = conn_fd, .dir_fd = dir_fd,
					 .in_fd = devnull, .out_fd = out_w, .parent = parent};
		child_exec(&c, prog, argv, spec->envp, ep[1]);
	}
	int fork_errno = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(ep[1]);
	close(devnull);
	if (pid == -1) {
		err_set(why, why_len, "cannot fork the kernel: %s", strerror(fork_errno));
	} else {
		ssize_t n;
		do
			n = read(ep[0], report, sizeof(report));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(report)) {
			child_failure(report[0], report[1], prog, spec->cwd, why, why_len);
			while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
				;
			pid = -1;
		}
	}
	close(ep[0]);
	free(prog);
	return pid;
}
