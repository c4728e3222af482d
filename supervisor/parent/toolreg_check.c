/* toolreg_check.c - see toolreg_check.h. */
#include "autoconf.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "config.h"
#include "err.h"
#include "fs_tree.h"
#include "kernel_env.h"
#include "toolreg_check.h"
#include "xmalloc.h"

/* Largest answer read from the probe. */
#define OUTPUT_MAX (1024 * 1024)

/*
 * Reads "MODULE NAME" lines on stdin; for each that fails, prints
 * "INDEX<TAB>reason". tools_dir (argv[1], maybe empty) goes on sys.path
 * as kernels have it.
 */
static const char probe[] =
	"import importlib, sys\n"
	"if sys.argv[1]:\n"
	"    sys.path.append(sys.argv[1])\n"
	"for i, line in enumerate(sys.stdin):\n"
	"    mod, name = line.split()\n"
	"    try:\n"
	"        m = importlib.import_module(mod)\n"
	"    except BaseException as e:\n"
	"        print('%d\\tmodule %s cannot be imported: %s: %s' % (i, mod, type(e).__name__, e))\n"
	"        continue\n"
	"    if not hasattr(m, name):\n"
	"        print('%d\\tmodule %s does not define %s' % (i, mod, name))\n"
	"    elif not callable(getattr(m, name)):\n"
	"        print('%d\\t%s.%s is not callable' % (i, mod, name))\n"
	"    sys.stdout.flush()\n";

/* The probe's output: its first OUTPUT_MAX bytes (a chunk more at the most). */
static void
keep_start(void *arg, const char *data, size_t len)
{
	struct buf *out = arg;

	if (out->len < OUTPUT_MAX)
		buf_add(out, data, len);
}

/* Turn the probe's "INDEX<TAB>reason" lines into messages naming file:line. */
static int
report(const struct config *cfg, char *text, char *why, size_t why_len)
{
	struct buf msg;
	int bad = 0;

	buf_init(&msg);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(l, '\t');
		char *end;
		unsigned long i = strtoul(l, &end, 10);
		if (tab == NULL || end != tab || i >= cfg->tools.n) {
			/* Not ours: the interpreter's own complaint. */
			buf_printf(&msg, "%stools: the environment's python says: %s",
				   bad++ ? "\n" : "", l);
			continue;
		}
		const struct tool_def *d = &cfg->tools.v[i];
		buf_printf(&msg, "%s%s:%zu: tool %s: %s", bad++ ? "\n" : "", d->file, d->line,
			   d->name, tab + 1);
	}
	buf_add(&msg, "", 1);
	if (bad)
		err_set(why, why_len, "%s", msg.data);
	buf_free(&msg);
	return bad ? -1 : 0;
}

/* Whether `st` may be written by kernels: by others, or by their one uid. */
static int
kernel_writable(const struct config *cfg, const struct stat *st, unsigned kernel_uid)
{
	if (st->st_mode & S_IWOTH)
		return 1;
	return cfg->kernel_uid_first == 0 && st->st_uid == kernel_uid && kernel_uid != 0;
}

int
toolreg_check_dir(const struct config *cfg, char *why, size_t why_len)
{
	unsigned kernel_uid = (unsigned)getuid();
	struct passwd *pw;
	struct stat st;

	if (kernel_uid == 0 && cfg->user[0] != '\0' && (pw = getpwnam(cfg->user)) != NULL)
		kernel_uid = (unsigned)pw->pw_uid;
	if (cfg->tools_dir[0] == '\0')
		return 0;
	if (stat(cfg->tools_dir, &st) == -1)
		return err_set(why, why_len, "tools_dir %s: %s", cfg->tools_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return err_set(why, why_len, "tools_dir %s is not a directory", cfg->tools_dir);
	if (kernel_writable(cfg, &st, kernel_uid))
		return err_set(why, why_len,
			       "tools_dir %s can be written by kernels (mode %03o, owner uid %u): "
			       "a kernel could change the tools every later session imports; give "
			       "it to root, mode 0755",
			       cfg->tools_dir, (unsigned)(st.st_mode & 0777), (unsigned)st.st_uid);
	if (cfg->kernel_uid_first != 0 && (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
		return err_set(why, why_len,
			       "tools_dir %s is not readable and searchable by others (mode %03o): "
			       "kernels of kernel_uid_range cannot import from it",
			       cfg->tools_dir, (unsigned)(st.st_mode & 0777));
	return 0;
}

int
toolreg_check_modules(const struct config *cfg, char *why, size_t why_len)
{
	if (cfg->tools.n == 0)
		return 0;
	char *python = kernel_env_python(cfg);
	if (access(python, X_OK) == -1) {
		err_set(why, why_len,
			"tools: modules not checked: the environment is not built (%s: %s); "
			"codeexecd --warm builds it",
			python, strerror(errno));
		free(python);
		return 1;
	}
	const char *tmp = getenv("TMPDIR");
	char *home = xasprintf("%s/codeexecd-tools.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(home) == NULL) {
		int rc = err_set(why, why_len, "tools: mkdtemp %s: %s", home, strerror(errno));
		free(home);
		free(python);
		return rc;
	}
	struct json_object *env = kernel_env_build(cfg);
	kernel_env_session(cfg, env, home);
	char **envp = kernel_env_strings(env);
	char *argv[] = {python, (char *)"-c", (char *)probe, cfg->tools_dir, NULL};
	struct buf input, out;
	buf_init(&input);
	buf_init(&out);
	for (size_t i = 0; i < cfg->tools.n; i++)
		buf_printf(&input, "%s %s\n", cfg->tools.v[i].module, cfg->tools.v[i].name);
	struct child_spec spec = {
		.argv = argv,
		.envp = envp,
		.dir = home,
		.input = input.data,
		.deadline = time(NULL) + TOOLREG_CHECK_TIMEOUT_S,
		.on_output = keep_start,
		.arg = &out,
	};
	int timed_out;
	int status = child_run(&spec, &timed_out);
	buf_add(&out, "", 1);
	int rc;
	if (status == -1)
		rc = err_set(why, why_len, "tools: cannot run %s: %s", python, strerror(errno));
	else if (timed_out)
		rc = err_set(why, why_len, "tools: %s did not import the tools' modules within %d s",
			     python, TOOLREG_CHECK_TIMEOUT_S);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		rc = err_set(why, why_len, "tools: %s failed checking the modules: %s", python,
			     out.data);
	else
		rc = report(cfg, out.data, why, why_len);
	buf_free(&input);
	buf_free(&out);
	fs_remove_tree(home);
	strv_free(envp);
	json_object_put(env);
	free(home);
	free(python);
	return rc;
}
