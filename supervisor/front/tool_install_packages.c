/*
 * tool_install_packages.c - {name}_install_packages: pip-install packages
 * into the session's own directory (session_pkgs.h), never into the shared
 * environment (seed 003's install-package, base environment untouched).
 *
 * The install runs in the session's kernel, as an execution of generated
 * code: so it runs under the session's identity, sandbox and limits, in
 * its turn among the session's executions, and the call's timeout
 * interrupts it like any execution (subprocess.run kills pip then). The
 * packages are argv items of pip, never words of a shell, and none may
 * start with '-': no option can be slipped in as a package.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "job.h"
#include "kernel_env_rules.h"
#include "kernelspec.h"
#include "pool.h"
#include "pylit.h"
#include "progress.h"
#include "result.h"
#include "session.h"
#include "tools.h"
#include "xmalloc.h"

/* At most this many packages per call, each at most PACKAGE_MAX bytes. */
#define PACKAGES_MAX 64
#define PACKAGE_MAX 512

/*
 * Run pip (or `uv pip` in a uv environment, when the kernel finds uv) with
 * ARGS, then make the new packages importable at once. Leaves no name in
 * the kernel. Filled in with three Python literals: the pip options, the
 * target directory, the packages.
 */
static const char install_code[] =
	"def _codeexecd_install(opts, target, pkgs):\n"
	"    import importlib, os, shutil, subprocess, sys\n"
	"    os.makedirs(target, exist_ok=True)\n"
	"    uv = shutil.which('uv') if %d else None\n"
	"    if uv:\n"
	"        opts = [o for o in opts if o != '--trusted-host']\n"
	"        argv = [uv, 'pip', 'install', '--python', sys.executable]\n"
	"    else:\n"
	"        argv = [sys.executable, '-m', 'pip', 'install', '--no-input',\n"
	"                '--disable-pip-version-check', '--no-cache-dir']\n"
	"    argv += ['--target', target, '--upgrade'] + opts + pkgs\n"
	"    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,\n"
	"                       stderr=subprocess.STDOUT)\n"
	"    print(p.stdout.decode(errors='replace'), end='')\n"
	"    if target not in sys.path:\n"
	"        sys.path.insert(0, target)\n"
	"    importlib.invalidate_caches()\n"
	"    if p.returncode != 0:\n"
	"        raise RuntimeError('%%s exited with status %%d: nothing was installed (see its '\n"
	"                           'output above)' %% (argv[0], p.returncode))\n"
	"try:\n"
	"    _codeexecd_install(%s, %s, %s)\n"
	"finally:\n"
	"    del _codeexecd_install\n";

static void
install_describe(const struct config *cfg, struct json_object *tool)
{
	static const char input_schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"packages\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":64,"
		"\"items\":{\"type\":\"string\",\"minLength\":1,\"pattern\":\"^[^-]\"},"
		"\"description\":\"Requirements as pip takes them (\\\"name\\\", "
		"\\\"name==1.2\\\", \\\"name>=1\\\"); none may start with '-'.\"},"
		"\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":"
		"\"Seconds the install may take (clamped to the server's maximum).\"},"
		"\"session_id\":{\"type\":\"string\",\"description\":"
		"\"Install into this earlier session of the same identity instead of this "
		"connection's own.\"}},"
		"\"required\":[\"packages\"],\"additionalProperties\":false}";
	char *text = xasprintf(
		"Install Python packages for this session only: into a directory of the "
		"session's own, ahead of the shared environment on sys.path, so they import at "
		"once here and nowhere else. The shared environment is never changed; the "
		"packages are removed when the session ends. `%%pip install` in the code does the "
		"same. They come from %s.",
		cfg->wheelhouse[0] ? "the server's local wheelhouse (no index)"
				   : "the package index the environment was built from");

	json_object_object_add(tool, "description", json_object_new_string(text));
	json_object_object_add(tool, "inputSchema", tool_schema(input_schema));
	free(text);
}

/*
 * The `packages` argument as a JSON array of strings (caller owns), or
 * NULL after tool_bad_params: absent, empty, too long, or an item that is
 * not a string, is empty, starts with '-' (an option) or holds a control
 * character.
 */
static struct json_object *
packages_arg(struct tool_call *tc)
{
	struct json_object *v;
	char why[256];

	if (!json_object_object_get_ex(tc->args, "packages", &v) ||
	    !json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
		return tool_bad_params(tc, "argument 'packages' (a non-empty array of strings) is "
					   "required");
	if (json_object_array_length(v) > PACKAGES_MAX) {
		snprintf(why, sizeof(why), "argument 'packages': at most %d per call",
			 PACKAGES_MAX);
		return tool_bad_params(tc, why);
	}
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *p = json_object_array_get_idx(v, i);
		const char *s = json_object_get_string(p);
		size_t len = (size_t)json_object_get_string_len(p);
		int bad = !json_object_is_type(p, json_type_string) || len == 0 ||
			  len > PACKAGE_MAX || strlen(s) != len;
		for (size_t k = 0; !bad && k < len; k++)
			bad = (unsigned char)s[k] < 0x20 || s[k] == 0x7f;
		if (bad) {
			snprintf(why, sizeof(why),
				 "argument 'packages': item %zu is not a requirement (a string "
				 "of 1 to %d printable characters)",
				 i, PACKAGE_MAX);
			return tool_bad_params(tc, why);
		}
		if (s[0] == '-') {
			snprintf(why, sizeof(why),
				 "argument 'packages': item %zu (%.64s) starts with '-': options "
				 "are refused, only requirements are installed",
				 i, s);
			return tool_bad_params(tc, why);
		}
	}
	return json_object_get(v);
}

/* The generated install code for workdir `workdir`. Caller owns. */
static char *
install_source(const struct config *cfg, const char *workdir, struct json_object *packages)
{
	struct json_object *opts = kernel_env_pip_options(cfg);
	char *pkgs = kernel_env_pkgs_dir(workdir);
	struct buf lopts, ltarget, lpkgs;

	buf_init(&lopts);
	buf_init(&ltarget);
	buf_init(&lpkgs);
	pylit_json(&lopts, opts);
	pylit_str(&ltarget, pkgs, strlen(pkgs));
	pylit_json(&lpkgs, packages);
	char *code = xasprintf(install_code, cfg->type == ENV_UV, lopts.data, ltarget.data,
			       lpkgs.data);

	buf_free(&lopts);
	buf_free(&ltarget);
	buf_free(&lpkgs);
	json_object_put(opts);
	free(pkgs);
	return code;
}

/* 1 if the pip options say --no-index: installs need no network then. */
static int
offline_options(const struct config *cfg)
{
	struct json_object *opts = kernel_env_pip_options(cfg);
	int offline = 0;

	for (size_t i = 0; i < json_object_array_length(opts); i++)
		offline |= strcmp(json_object_get_string(json_object_array_get_idx(opts, i)),
				  "--no-index") == 0;
	json_object_put(opts);
	return offline;
}

/*
 * A kernel without a network reaches no index: say so rather than let pip
 * retry for minutes. NULL when installs can work: a network, a wheelhouse,
 * a dependency_file that itself installs with --no-index (from local
 * --find-links directories), or isolated kernels with egress.allow, whose
 * pip reaches the indexes it allows through the proxy (and reads the
 * proxy's 403 naming the rule for any other).
 */
static const char *
no_index_reason(const struct config *cfg)
{
	if (cfg->kernel_network_mode == NET_INHERIT || offline_options(cfg) ||
	    (cfg->kernel_network_mode == NET_ISOLATED && cfg->egress_allow.n > 0))
		return NULL;
	return cfg->kernel_network_mode == NET_SECCOMP
		       ? "kernel_network_mode is seccomp: kernels have no network, and installs "
			 "need a reachable package index. Ask the operator to configure a local "
			 "wheelhouse (the wheelhouse key), which works without one."
		       : "kernel_network_mode is isolated: kernels have no network but loopback, "
			 "and installs need a reachable package index. Ask the operator to "
			 "configure a local wheelhouse (the wheelhouse key), which works "
			 "without one.";
}

static struct json_object *
install_call(struct tool_call *tc)
{
	struct json_object *packages = packages_arg(tc), *r = NULL, *failed = NULL;
	double seconds;
	const char *why;

	if (packages == NULL)
		return NULL;
	if ((seconds = tool_arg_timeout(tc)) < 0) {
		json_object_put(packages);
		return NULL;
	}
	struct session *s = tool_session_arg(tc, "session_id");
	if (s == NULL) {
		json_object_put(packages);
		return NULL;
	}
	if ((why = no_index_reason(tc->cfg)) != NULL) {
		r = result_to_tool(result_failed("NoPackageIndex", why), s->id);
		goto out;
	}
	char *workdir = tool_session_workdir(tc, s, &failed);
	if (workdir == NULL) {
		r = result_to_tool(failed, s->id);
		goto out;
	}
	char *code = install_source(tc->cfg, workdir, packages);
	/* Silent: not in the session's history; this thread drives it. */
	struct job *j = job_new(s, tc->session->id, code, seconds, 1, tc->request_id);
	if (!progress_wait(tc, j, -1))
		job_background(j); /* the client left and it did not stop yet */
	if (j->cancel_requested) {
		tc->no_response = 1;
	} else {
		r = result_to_tool(json_object_get(j->call.result), s->id);
		struct json_object *sc;
		if (json_object_object_get_ex(r, "structuredContent", &sc)) {
			char *pkgs = kernel_env_pkgs_dir(workdir);
			json_object_object_add(sc, "packages", json_object_get(packages));
			json_object_object_add(sc, "target_directory",
					       json_object_new_string(pkgs));
			free(pkgs);
		}
	}
	job_unref(j);
	free(code);
	free(workdir);
out:
	session_put(s);
	json_object_put(packages);
	return r;
}

const struct tool tool_install_packages = {
	.name_format = "{name}_install_packages",
	.describe = install_describe,
	/* pip, and dill of a Python namespace: ipykernel only (kernelspec.h). */
	.listed = kernelspec_is_ipykernel,
	.call = install_call,
	.session_arg = "session_id",
};
