/* builder.c - see builder.h: what the pip, uv and conda builders share. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "builder.h"
#include "child.h"
#include "log.h"
#include "xmalloc.h"

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

/* A step's output, logged line by line. */
struct step_log {
	struct buf pending;
	const char *tag;
};

static void
step_output(void *arg, const char *data, size_t len)
{
	struct step_log *l = arg;

	buf_add(&l->pending, data, len);
	log_lines(&l->pending, l->tag, 0);
}

/* Run one step; `quiet` sends its output to /dev/null instead of the log. */
static int
run_step(struct build_ctx *b, char *const argv[], int quiet)
{
	int timed_out;
	const char *tag = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (time(NULL) >= b->deadline) {
		snprintf(b->why, b->why_len, "the build took longer than build_timeout_s (%d s)",
			 b->cfg->build_timeout_s);
		return -1;
	}
	struct step_log out = {.tag = tag};
	struct child_spec spec = {
		.argv = argv,
		.envp = b->envp,
		.dir = "/",
		.quiet = quiet,
		.deadline = b->deadline,
		.on_output = step_output,
		.arg = &out,
		.exec_error = "cannot execute the build step\n",
	};
	buf_init(&out.pending);
	int status = child_run(&spec, &timed_out);
	log_lines(&out.pending, tag, 1);
	buf_free(&out.pending);
	if (status == -1) {
		snprintf(b->why, b->why_len, "cannot start a build step: %s", strerror(errno));
		return -1;
	}
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
