/* mpl_check.c - see mpl_check.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
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

/* The interpreter's output: its last OUTPUT_KEEP bytes. */
static void
keep_end(void *arg, const char *data, size_t len)
{
	struct buf *out = arg;

	buf_add(out, data, len);
	if (out->len > OUTPUT_KEEP)
		buf_consume(out, out->len - OUTPUT_KEEP);
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
	struct buf out;

	buf_init(&out);
	struct child_spec spec = {
		.argv = argv,
		.envp = envp,
		.dir = home,
		.deadline = time(NULL) + MPL_CHECK_TIMEOUT_S,
		.on_output = keep_end,
		.arg = &out,
		.exec_error = "cannot execute the environment's python\n",
	};
	int timed_out;
	int status = child_run(&spec, &timed_out);
	if (status == -1) {
		buf_free(&out);
		return err_set(why, why_len, "matplotlib_backend check: cannot run %s: %s", python,
			       strerror(errno));
	}
	buf_add(&out, "", 1);
	int rc = 0;
	if (timed_out)
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
