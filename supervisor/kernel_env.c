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

static const char *const allowed_mime[] = {
	"text/plain", "text/html", "text/markdown", "text/latex", "image/png",
	"image/svg+xml", "image/jpeg", "application/json", "application/javascript",
	"application/pdf",
};

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
	for (size_t i = 0; i < cfg->kernel_environment.n; i++)
		put(env, cfg->kernel_environment.keys[i], cfg->kernel_environment.values[i]);
	return env;
}

void
kernel_env_session(struct json_object *env, const char *workdir)
{
	put(env, "HOME", workdir);
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
	static const char *const fixed[] = {"-m", "ipykernel_launcher", "-f", "{connection_file}"};
	struct json_object *argv = json_object_new_array();

	char *python = kernel_env_python(cfg);
	json_object_array_add(argv, json_object_new_string(python));
	free(python);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		json_object_array_add(argv, json_object_new_string(fixed[i]));
	if (history[cfg->kernel_history])
		json_object_array_add(argv, json_object_new_string(history[cfg->kernel_history]));
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

struct json_object *
kernel_env_allow_mime(void)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < sizeof(allowed_mime) / sizeof(allowed_mime[0]); i++)
		json_object_array_add(a, json_object_new_string(allowed_mime[i]));
	return a;
}
