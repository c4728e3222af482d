/* kernel_env.c - see kernel_env.h. */
#include "autoconf.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "buf.h"
#include "kernel_env.h"
#include "session_pkgs.h"
#include "xmalloc.h"

/* Daemon variables a kernel may see, for locale and time zone only. */
static const char *const passed_through[] = {
	"LANG", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE",
	"LC_MONETARY", "LC_MESSAGES", "TZ",
};

/*
 * The index options of a requirements file that per-session installs take
 * over, each with its short form (or NULL), whether it takes a value, and
 * the variable pip reads it from (a list, space-separated, when repeated).
 */
static const struct {
	const char *name, *short_name;
	int has_value;
	const char *var;
} pip_index_options[] = {
	{"--index-url", "-i", 1, "PIP_INDEX_URL"},
	{"--extra-index-url", NULL, 1, "PIP_EXTRA_INDEX_URL"},
	{"--find-links", "-f", 1, "PIP_FIND_LINKS"},
	{"--trusted-host", NULL, 1, "PIP_TRUSTED_HOST"},
	{"--no-index", NULL, 0, "PIP_NO_INDEX"},
};

#define N_PIP_OPTIONS (sizeof(pip_index_options) / sizeof(pip_index_options[0]))

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

/* Index of the option `tok` ("--name", "--name=v", "-i") names, or -1. */
static int
pip_option_of(const char *tok)
{
	for (size_t i = 0; i < N_PIP_OPTIONS; i++) {
		size_t n = strlen(pip_index_options[i].name);
		if (strncmp(tok, pip_index_options[i].name, n) == 0 &&
		    (tok[n] == '\0' || tok[n] == '='))
			return (int)i;
		if (pip_index_options[i].short_name &&
		    strcmp(tok, pip_index_options[i].short_name) == 0)
			return (int)i;
	}
	return -1;
}

/* Add option `i` of one dependency_file line, its value from `rest`, to out. */
static void
add_pip_option(struct json_object *out, int i, const char *tok, const char *rest)
{
	const char *eq = strchr(tok, '=');
	char value[4096];

	if (!pip_index_options[i].has_value) {
		json_object_array_add(out, json_object_new_string(pip_index_options[i].name));
		return;
	}
	if (eq) {
		snprintf(value, sizeof(value), "%s", eq + 1);
	} else {
		rest += strspn(rest, " \t");
		snprintf(value, sizeof(value), "%.*s", (int)strcspn(rest, " \t#"), rest);
	}
	if (value[0] == '\0')
		return; /* pip refused it when the environment was built */
	json_object_array_add(out, json_object_new_string(pip_index_options[i].name));
	json_object_array_add(out, json_object_new_string(value));
}

struct json_object *
kernel_env_pip_options(const struct config *cfg)
{
	struct json_object *out = json_object_new_array();

	if (cfg->wheelhouse[0] != '\0') {
		json_object_array_add(out, json_object_new_string("--no-index"));
		json_object_array_add(out, json_object_new_string("--find-links"));
		json_object_array_add(out, json_object_new_string(cfg->wheelhouse));
		return out;
	}
	if (cfg->type == ENV_CONDA)
		return out; /* environment.yml: no pip option lines */
	for (const char *line = cfg->dependency_file; *line != '\0';) {
		size_t len = strcspn(line, "\n");
		char tok[4096];
		const char *p = line + strspn(line, " \t");
		size_t tlen = strcspn(p, " \t\n");
		if (p < line + len && tlen < sizeof(tok)) {
			snprintf(tok, sizeof(tok), "%.*s", (int)tlen, p);
			char *lineend = xasprintf("%.*s", (int)(line + len - (p + tlen)), p + tlen);
			int i = pip_option_of(tok);
			if (i >= 0)
				add_pip_option(out, i, tok, lineend);
			free(lineend);
		}
		line += len + (line[len] == '\n');
	}
	return out;
}

/* The pip options as the variables pip reads, so %pip install uses them too. */
static void
put_pip_options(const struct config *cfg, struct json_object *env)
{
	struct json_object *opts = kernel_env_pip_options(cfg);
	struct buf vals[N_PIP_OPTIONS];

	for (size_t i = 0; i < N_PIP_OPTIONS; i++)
		buf_init(&vals[i]);
	for (size_t k = 0; k < json_object_array_length(opts); k++) {
		int i = pip_option_of(json_object_get_string(json_object_array_get_idx(opts, k)));
		if (!pip_index_options[i].has_value) {
			buf_adds(&vals[i], "1");
			continue;
		}
		const char *v = json_object_get_string(json_object_array_get_idx(opts, ++k));
		if (i == 0 || vals[i].len == 0) /* one index URL: the last one wins */
			vals[i].len = 0;
		else
			buf_adds(&vals[i], " ");
		buf_adds(&vals[i], v);
	}
	for (size_t i = 0; i < N_PIP_OPTIONS; i++) {
		if (vals[i].len > 0)
			put(env, pip_index_options[i].var, vals[i].data);
		buf_free(&vals[i]);
	}
	json_object_put(opts);
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
	/* %pip install: no prompt, no check of PyPI for a newer pip, our index. */
	put(env, "PIP_NO_INPUT", "1");
	put(env, "PIP_DISABLE_PIP_VERSION_CHECK", "1");
	put_pip_options(cfg, env);
	for (size_t i = 0; i < cfg->kernel_environment.n; i++)
		put(env, cfg->kernel_environment.keys[i], cfg->kernel_environment.values[i]);
	return env;
}

char *
kernel_env_pkgs_dir(const char *workdir)
{
	return xasprintf("%s/" SESSION_PKGS_DIR, workdir);
}

void
kernel_env_session(const struct config *cfg, struct json_object *env, const char *workdir)
{
	put(env, "HOME", workdir);
	/*
	 * A seccomp kernel is started with -I (no PYTHONPATH) and must not
	 * learn its directory before it is locked: its startup does this then.
	 */
	if (cfg->kernel_network_mode == NET_SECCOMP)
		return;
	char *pkgs = kernel_env_pkgs_dir(workdir);
	put(env, "PYTHONPATH", pkgs);
	put(env, "PIP_TARGET", pkgs);
	free(pkgs);
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

struct json_object *
kernel_env_allow_mime(void)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < sizeof(allowed_mime) / sizeof(allowed_mime[0]); i++)
		json_object_array_add(a, json_object_new_string(allowed_mime[i]));
	return a;
}
