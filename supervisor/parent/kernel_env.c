/* kernel_env.c - see kernel_env.h. */
#include "autoconf.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "egress.h"
#include "kernelspec.h"
#include "netmode.h"
#include "kernel_env.h"
#include "kernel_env_rules.h"
#include "xmalloc.h"

/* Daemon variables a kernel may see, for locale and time zone only. */
static const char *const passed_through[] = {
	"LANG", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE",
	"LC_MONETARY", "LC_MESSAGES", "TZ",
};

/* The temporary-directory variables, all set to the same directory. */
static const char *const temp_vars[] = {"TMPDIR", "TMP", "TEMP"};

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
 * With intercepted hosts (egress.inject), the bundle of the system's CAs
 * and the egress proxy's, for OpenSSL (Python's ssl, curl), requests and
 * pip. Before kernel_environment: an operator's own bundle wins.
 */
static void
put_egress_ca(const struct config *cfg, struct json_object *env)
{
	if (!egress_for_kernels(cfg) || cfg->egress_inject.n == 0)
		return;
	char *bundle = xasprintf("%s/%s", cfg->runtime_dir, EGRESS_CA_BUNDLE);
	put(env, "SSL_CERT_FILE", bundle);
	put(env, "REQUESTS_CA_BUNDLE", bundle);
	put(env, "PIP_CERT", bundle);
	free(bundle);
}

/*
 * Isolated kernels with egress.allow: the proxy variables name the
 * forwarder of their network namespace (worker/egress_forward.h), in both
 * cases that tools read, and pip's own. After kernel_environment: nothing
 * else is reachable, so no configured proxy may replace it.
 */
static void
put_egress_proxy(const struct config *cfg, struct json_object *env)
{
	static const char *const proxy[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
					    "https_proxy", "PIP_PROXY"};
	char url[40];

	if (!egress_for_kernels(cfg))
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", NET_EGRESS_PORT);
	for (size_t i = 0; i < sizeof(proxy) / sizeof(proxy[0]); i++)
		put(env, proxy[i], url);
	put(env, "NO_PROXY", "localhost,127.0.0.1,::1");
	put(env, "no_proxy", "localhost,127.0.0.1,::1");
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
	kernel_env_pip_vars(cfg, env);
	put_egress_ca(cfg, env);
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
	put_egress_proxy(cfg, env);
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

	/* Another kernel: its kernelspec's argv, or kernel_argv, as it is. */
	if (!kernelspec_is_ipykernel(cfg)) {
		for (size_t i = 0; i < cfg->kernel_argv.n; i++)
			json_object_array_add(argv, json_object_new_string(cfg->kernel_argv.v[i]));
		return argv;
	}
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
