/* kernel_env.c - see kernel_env.h. */
#include "autoconf.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
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
 * Each sidecar's URL in its url_env_var, and the first one's address as
 * SIDECAR_HOST and SIDECAR_PORT (seed 000's framework names). The ports
 * are the ones the parent picked before it started them (sidecar.h).
 */
static void
put_sidecars(const struct config *cfg, struct json_object *env)
{
	char port[16];

	for (size_t i = 0; i < cfg->sidecars.n; i++) {
		const struct config_sidecar *sc = &cfg->sidecars.v[i];
		int v6 = strchr(sc->host, ':') != NULL;
		char *url = xasprintf("http://%s%s%s:%d", v6 ? "[" : "", sc->host, v6 ? "]" : "",
				      sc->port);
		put(env, sc->url_env_var, url);
		free(url);
		/* A seccomp kernel may connect() nowhere: it gets the broker (worker_launch.c). */
		if (sc->socket_path && cfg->kernel_network_mode != NET_SECCOMP) {
			char *name = xasprintf("%s_SOCKET", sc->url_env_var);
			put(env, name, sc->socket_path);
			free(name);
		}
	}
	if (cfg->sidecars.n == 0)
		return;
	snprintf(port, sizeof(port), "%d", cfg->sidecars.v[0].port);
	put(env, "SIDECAR_HOST", cfg->sidecars.v[0].host);
	put(env, "SIDECAR_PORT", port);
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
	put_sidecars(cfg, env);
	/* %pip install: no prompt, no check of PyPI for a newer pip, our index. */
	put(env, "PIP_NO_INPUT", "1");
	put(env, "PIP_DISABLE_PIP_VERSION_CHECK", "1");
	put_pip_options(cfg, env);
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

char *
kernel_env_pkgs_dir(const char *workdir)
{
	return xasprintf("%s/" SESSION_PKGS_DIR, workdir);
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
kernel_env_session(const struct config *cfg, struct json_object *env, const char *workdir)
{
	put(env, "HOME", workdir);
	/* The directory whose files are the session's artifacts (the worker makes it). */
	char *outputs = xasprintf("%s/outputs", workdir);
	put(env, "CODEEXECD_OUTPUT_DIR", outputs);
	free(outputs);
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
