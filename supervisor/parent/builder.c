/* builder.c - see builder.h: what the pip, uv and conda builders share. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "builder.h"
#include "log.h"
#include "xmalloc.h"

/* Seconds a step's leftover processes may keep its output open after it exits. */
#define STRAGGLER_GRACE_S 2

const struct builder *
builder_for(enum env_type t)
{
	switch (t) {
	case ENV_UV: return &builder_uv;
	case ENV_CONDA: return &builder_conda;
	case ENV_PIP: break;
	}
	return &builder_pip;
}

char *
builder_find(const char *name, const char *path)
{
	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	for (const char *p = path; *p != '\0';) {
		size_t len = strcspn(p, ":");
		if (len > 0 && p[0] == '/') {
			char *cand = xasprintf("%.*s/%s", (int)len, p, name);
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
				return cand;
			free(cand);
		}
		p += len + (p[len] == ':');
	}
	return NULL;
}

const char *
builder_tool_path(void)
{
	static char *path;

	if (path == NULL) {
		const char *d = getenv("PATH");
		path = d && d[0] ? xasprintf("%s:%s", d, BUILDER_PATH) : xstrdup(BUILDER_PATH);
	}
	return path;
}

/* The command line of argv, for messages. Caller owns. */
static char *
command_line(char *const argv[])
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; argv[i] != NULL; i++)
		buf_printf(&b, "%s%s", i ? " " : "", argv[i]);
	return buf_release(&b);
}

/* Log each complete line of a step's output, tagged with the program. */
static void
log_lines(struct buf *pending, const char *tag, int flush)
{
	char *nl;

	while (pending->len > 0 && (nl = memchr(pending->data, '\n', pending->len)) != NULL) {
		*nl = '\0';
		log_info("%s: %s", tag, pending->data);
		buf_consume(pending, (size_t)(nl - pending->data) + 1);
	}
	if (flush && pending->len > 0) {
		log_info("%s: %s", tag, pending->data);
		buf_consume(pending, pending->len);
	}
}

/*
 * The child side: a process group of its own, killed if the daemon dies,
 * in "/", output to `out`. Only async-signal-safe calls between fork and exec.
 */
static void __attribute__((noreturn))
exec_step(char *const argv[], char **envp, int out, int quiet, pid_t parent)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	int null = open("/dev/null", O_RDWR);
	if (null == -1 || dup2(null, 0) == -1 || dup2(quiet ? null : out, 1) == -1 ||
	    dup2(quiet ? null : out, 2) == -1 || chdir("/") == -1)
		_exit(127);
	execve(argv[0], argv, envp);
	static const char msg[] = "cannot execute the build step\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(127);
}

/*
 * Wait for `pid` to exit while logging its output. Output still open
 * STRAGGLER_GRACE_S after the exit (a background process it left) and the
 * deadline both end the wait; then the whole group is killed. Returns the
 * wait status.
 */
static int
collect_step(struct build_ctx *b, pid_t pid, int fd, const char *tag, int *timed_out)
{
	struct buf pending;
	char chunk[4096];
	int status = 0, exited = 0, eof = 0;
	time_t exited_at = 0;

	buf_init(&pending);
	*timed_out = 0;
	while (!(exited && eof)) {
		struct pollfd pfd = {.fd = eof ? -1 : fd, .events = POLLIN};
		int rc = poll(&pfd, 1, eof ? 50 : 250);
		if (rc > 0) {
			ssize_t n = read(fd, chunk, sizeof(chunk));
			if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
				eof = 1;
			if (n > 0) {
				buf_add(&pending, chunk, (size_t)n);
				log_lines(&pending, tag, 0);
			}
		}
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			exited_at = time(NULL);
		}
		if (exited && time(NULL) - exited_at >= STRAGGLER_GRACE_S)
			break;
		if (time(NULL) >= b->deadline) {
			*timed_out = !exited;
			break;
		}
	}
	log_lines(&pending, tag, 1);
	buf_free(&pending);
	/* The whole group: whatever the step left running goes with it. */
	kill(-pid, SIGKILL);
	if (!exited)
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
	return status;
}

/* Run one step; `quiet` sends its output to /dev/null instead of the log. */
static int
run_step(struct build_ctx *b, char *const argv[], int quiet)
{
	int out[2], timed_out;
	const char *tag = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (time(NULL) >= b->deadline) {
		snprintf(b->why, b->why_len, "the build took longer than build_timeout_s (%d s)",
			 b->cfg->build_timeout_s);
		return -1;
	}
	if (pipe2(out, O_CLOEXEC) == -1) {
		snprintf(b->why, b->why_len, "pipe for a build step: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == -1) {
		snprintf(b->why, b->why_len, "fork for a build step: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		return -1;
	}
	if (pid == 0)
		exec_step(argv, b->envp, out[1], quiet, parent);
	setpgid(pid, pid); /* also here, so the kill below never misses */
	close(out[1]);
	int status = collect_step(b, pid, out[0], tag, &timed_out);
	close(out[0]);
	if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	char *cmd = command_line(argv);
	if (timed_out)
		snprintf(b->why, b->why_len,
			 "build step killed: the build took longer than build_timeout_s "
			 "(%d s): %s",
			 b->cfg->build_timeout_s, cmd);
	else if (WIFEXITED(status))
		snprintf(b->why, b->why_len, "build step failed with exit status %d: %s",
			 WEXITSTATUS(status), cmd);
	else
		snprintf(b->why, b->why_len, "build step killed by signal %d: %s",
			 WTERMSIG(status), cmd);
	free(cmd);
	return -1;
}

int
builder_run(struct build_ctx *b, char *const argv[])
{
	char *cmd = command_line(argv);
	log_info("build: %s", cmd);
	free(cmd);
	return run_step(b, argv, 0);
}

int
builder_can_import(struct build_ctx *b, const char *python, const char *module)
{
	char *code = xasprintf("import %s", module);
	char *argv[] = {(char *)python, (char *)"-c", code, NULL};
	char saved[512];

	/* A failed probe is an answer, not an error: keep err as it was. */
	snprintf(saved, sizeof(saved), "%s", b->why);
	int ok = run_step(b, argv, 1) == 0;
	snprintf(b->why, b->why_len, "%s", saved);
	free(code);
	return ok;
}

/* pip's name normalization, compared in place: case and runs of -_. ignored. */
static int
same_name(const char *a, size_t alen, const char *b)
{
	size_t i = 0, j = 0, blen = strlen(b);

	while (i < alen && j < blen) {
		int sa = strchr("-_.", a[i]) != NULL, sb = strchr("-_.", b[j]) != NULL;
		if (sa && sb) {
			while (i < alen && strchr("-_.", a[i]))
				i++;
			while (j < blen && strchr("-_.", b[j]))
				j++;
			continue;
		}
		if (sa || sb || tolower((unsigned char)a[i]) != tolower((unsigned char)b[j]))
			return 0;
		i++;
		j++;
	}
	return i == alen && j == blen;
}

int
builder_spec_names(const char *spec, const char *name)
{
	const char *colons = strstr(spec, "::");

	if (colons != NULL)
		spec = colons + 2;
	spec += strspn(spec, " \t");
	size_t len = strspn(spec, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				  "0123456789-_.");
	return len > 0 && same_name(spec, len, name);
}

int
builder_requires(const char *requirements, const char *name)
{
	for (const char *p = requirements; *p != '\0';) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		const char *s = line + strspn(line, " \t");
		int hit = s[0] != '-' && s[0] != '#' && builder_spec_names(s, name);
		free(line);
		if (hit)
			return 1;
		p += len + (p[len] == '\n');
	}
	return 0;
}

int
builder_has_requirements(const char *text)
{
	for (const char *p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n");
		size_t sp = strspn(p, " \t\r");
		if (sp < len && p[sp] != '#')
			return 1;
		p += len + (p[len] == '\n');
	}
	return 0;
}

char *
builder_requirements(struct build_ctx *b, const char *python)
{
	const char *deps = b->cfg->dependency_file;
	size_t len = strlen(deps);

	if (builder_requires(deps, "ipykernel"))
		return xstrdup(deps);
	if (builder_can_import(b, python, "ipykernel")) {
		log_info("build: ipykernel is importable already; not adding it");
		return xstrdup(deps);
	}
	log_info("build: dependency_file does not name ipykernel; adding it");
	return xasprintf("%s%sipykernel\n", deps, len && deps[len - 1] != '\n' ? "\n" : "");
}

int
builder_base_python(struct build_ctx *b, const char *type, const char *packages)
{
	b->base_python = builder_find(b->cfg->python, BUILDER_PATH);
	if (b->base_python == NULL) {
		snprintf(b->why, b->why_len,
			 "type %s needs the interpreter %s, which is not in %s: install it "
			 "(apt-get install %s) or set python to its path",
			 type, b->cfg->python, BUILDER_PATH, packages);
		return -1;
	}
	return 0;
}

int
builder_venv(struct build_ctx *b, char *const venv[], char *const install[])
{
	if (builder_run(b, venv) == -1)
		return -1;

	char *reqs = builder_requirements(b, b->env_python);
	int rc = 0;
	if (builder_has_requirements(reqs)) {
		char *file = xasprintf("%s/.codeexecd-requirements.txt", b->prefix);
		size_t n = 0;
		while (install[n] != NULL)
			n++;
		char **argv = xcalloc(n + 3, sizeof(*argv));
		memcpy(argv, install, n * sizeof(*argv));
		argv[n] = (char *)"-r";
		argv[n + 1] = file;
		rc = builder_write(b, file, reqs) == -1 || builder_run(b, argv) == -1 ? -1 : 0;
		free(argv);
		free(file);
	}
	free(reqs);
	return rc;
}

void
builder_clear(struct build_ctx *b)
{
	free(b->tool);
	free(b->base_python);
	free(b->envfile);
	b->tool = b->base_python = b->envfile = NULL;
}

int
builder_write(struct build_ctx *b, const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	size_t len = strlen(text), off = 0;

	if (fd == -1)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	snprintf(b->why, b->why_len, "write %s: %s", path, strerror(errno));
	if (fd != -1)
		close(fd);
	return -1;
}
