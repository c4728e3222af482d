/* kernel_env.c - see kernel_env.h. */
#include "autoconf.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "kernel_env.h"
#include "xmalloc.h"

/* Daemon variables a kernel may see, for locale and time zone only. */
static const char *const passed_through[] = {
	"LANG", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE",
	"LC_MONETARY", "LC_MESSAGES", "TZ",
};

/* The temporary-directory variables, all set to the same directory. */
static const char *const temp_vars[] = {"TMPDIR", "TMP", "TEMP"};

/* Every output's fallback, kept whatever allow_mime says. */
static const char fallback_mime[] = "text/plain";

/*
 * matplotlib_backend none: ipykernel sets MPLBACKEND to its inline backend
 * when it is unset, before it runs exec_lines; this line takes it back
 * (a statement, so that it displays nothing and binds no name).
 */
static const char mpl_unset[] =
	"--IPKernelApp.exec_lines=if True: __import__('os').environ.pop('MPLBACKEND', None)";

char *
kernel_env_python(const struct config *cfg)
{
	return xasprintf("%s/bin/python", cfg->build_dir);
}

const char *
kernel_env_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/";
}

/* Set NAME=value in the environment object, replacing an earlier value. */
static void
put(struct json_object *env, const char *name, const char *value)
{
	json_object_object_add(env, name, json_object_new_string(value));
}

/* The daemon's TMPDIR when it is an absolute path, else /tmp. */
static const char *
temp_dir(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' ? t : "/tmp";
}

/*
 * The baseline, the framework's values, then kernel_environment. config.c
 * has refused every kernel_environment name set here before it, so the
 * configured values cannot replace the framework's.
 */
struct json_object *
kernel_env_build(const struct config *cfg)
{
	struct json_object *env = json_object_new_object();

	char *path = xasprintf("%s/bin:/usr/local/bin:/usr/bin:/bin", cfg->build_dir);
	put(env, "PATH", path);
	free(path);
	put(env, "HOME", kernel_env_home());
	put(env, "LANG", "C.UTF-8");
	for (size_t i = 0; i < sizeof(passed_through) / sizeof(passed_through[0]); i++) {
		const char *v = getenv(passed_through[i]);
		if (v && v[0])
			put(env, passed_through[i], v);
	}
	for (size_t i = 0; i < sizeof(temp_vars) / sizeof(temp_vars[0]); i++)
		put(env, temp_vars[i], temp_dir());
	if (cfg->type == ENV_CONDA) {
		put(env, "CONDA_PREFIX", cfg->build_dir);
		put(env, "CONDA_DEFAULT_ENV", cfg->build_dir);
	} else {
		put(env, "VIRTUAL_ENV", cfg->build_dir);
	}
	/* A .pth file in the user site directory would run in every kernel. */
	put(env, "PYTHONNOUSERSITE", "1");
	put(env, "MCP_ASSET_CACHE_DIR", cfg->asset_cache_dir);
	/* Without authentication every caller is the same anonymous identity. */
	put(env, "USER_IDENTITY", "anonymous");
	/*
	 * Before kernel_environment, whose MPLBACKEND takes precedence. The
	 * inline default is ipykernel's own (it sets MPLBACKEND to it when
	 * unset), so the default environment stays seed 000's baseline.
	 */
	if (strcmp(cfg->matplotlib_backend, CONFIG_MPL_NONE) != 0 &&
	    strcmp(cfg->matplotlib_backend, CONFIG_MPL_INLINE) != 0)
		put(env, "MPLBACKEND", cfg->matplotlib_backend);
	for (size_t i = 0; i < cfg->kernel_environment.n; i++)
		put(env, cfg->kernel_environment.keys[i], cfg->kernel_environment.values[i]);
	return env;
}

char **
kernel_env_strings(struct json_object *env)
{
	char **v = xcalloc((size_t)json_object_object_length(env) + 1, sizeof(*v));
	size_t i = 0;

	json_object_object_foreach(env, name, val)
		v[i++] = xasprintf("%s=%s", name, json_object_get_string(val));
	return v;
}

void
kernel_env_session(struct json_object *env, const char *workdir)
{
	put(env, "HOME", workdir);
}

/* Whether kernel_environment names MPLBACKEND (then it decides). */
static int
sets_mplbackend(const struct config *cfg)
{
	for (size_t i = 0; i < cfg->kernel_environment.n; i++)
		if (strcmp(cfg->kernel_environment.keys[i], "MPLBACKEND") == 0)
			return 1;
	return 0;
}

struct json_object *
kernel_env_argv(const struct config *cfg)
{
	/* IPython's HistoryManager options, per kernel_history. */
	static const char *const history[] = {
		[HISTORY_MEMORY] = "--HistoryManager.hist_file=:memory:",
		[HISTORY_NONE] = "--HistoryManager.enabled=False",
		[HISTORY_DISK] = NULL, /* the default: $HOME/.ipython/.../history.sqlite */
	};
	/*
	 * ipykernel_launcher, with debugpy kept out: ipykernel imports it at
	 * start for the Jupyter debugger, which no MCP client speaks; without
	 * it a kernel starts about 16% sooner and holds about 11 MB less
	 * (bench/README.md). The seccomp mode's own start-up does the same.
	 */
	static const char launcher[] = "import sys\n"
				       "sys.modules['debugpy'] = None\n"
				       "from ipykernel import kernelapp\n"
				       "kernelapp.launch_new_instance()\n";
	static const char *const fixed[] = {"-c", launcher, "-f", "{connection_file}"};
	struct json_object *argv = json_object_new_array();

	char *python = kernel_env_python(cfg);
	json_object_array_add(argv, json_object_new_string(python));
	free(python);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		json_object_array_add(argv, json_object_new_string(fixed[i]));
	if (history[cfg->kernel_history])
		json_object_array_add(argv, json_object_new_string(history[cfg->kernel_history]));
	if (strcmp(cfg->matplotlib_backend, CONFIG_MPL_NONE) == 0 && !sets_mplbackend(cfg))
		json_object_array_add(argv, json_object_new_string(mpl_unset));
	return argv;
}

char *
kernel_env_warm_code(const struct config *cfg)
{
	struct buf b;

	buf_init(&b);
	/* Names are checked by config.c: nothing but identifiers and dots. */
	for (size_t i = 0; i < cfg->pool_preload.n; i++)
		buf_printf(&b, "import %s\n", cfg->pool_preload.v[i]);
	/*
	 * IPython's own output cache: displayed like any value, but the one
	 * value its display hook stores nowhere (no _, _1 or Out entry).
	 */
	buf_printf(&b, "_oh\n");
	return buf_release(&b);
}

/* Whether NULL-terminated `v` holds `s`. */
static int
strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return 1;
	return 0;
}

char **
kernel_env_mime(const struct config *cfg, char *const *asked)
{
	const struct strlist *l = &cfg->allow_mime;
	char **v = xcalloc(l->n + 2, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (asked == NULL || strv_has(asked, l->v[i]) || strcmp(l->v[i], fallback_mime) == 0)
			v[n++] = xstrdup(l->v[i]);
	if (!strv_has(v, fallback_mime))
		v[n++] = xstrdup(fallback_mime);
	return v;
}

int
kernel_env_mime_allowed(const struct config *cfg, const char *mime)
{
	if (strcmp(mime, fallback_mime) == 0)
		return 1;
	for (size_t i = 0; i < cfg->allow_mime.n; i++)
		if (strcmp(cfg->allow_mime.v[i], mime) == 0)
			return 1;
	return 0;
}
