/*
 * test_kernel_env.c - what per-session installs take from the
 * configuration: the pip options of dependency_file or of wheelhouse, the
 * same as the PIP_* variables of every kernel (%pip install), and the
 * session's package directory as PYTHONPATH and PIP_TARGET.
 */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernel_env.h"
#include "kernel_env_rules.h"
#include "kernel_warm.h"
#include "xmalloc.h"

static struct config cfg;

static void
strlist_push(struct strlist *l, const char *s)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

/* The defaults, with dependency_file `deps` and wheelhouse `wheels`. */
static void
setup_cfg(const char *deps, const char *wheels)
{
	config_defaults(&cfg);
	free(cfg.dependency_file);
	cfg.dependency_file = xstrdup(deps);
	free(cfg.wheelhouse);
	cfg.wheelhouse = xstrdup(wheels);
	free(cfg.asset_cache_dir);
	cfg.asset_cache_dir = xstrdup("/srv/assets");
}

/* The options as one space-separated string. Caller frees. */
static char *
options_text(void)
{
	struct json_object *a = kernel_env_pip_options(&cfg);
	char *out = xstrdup("");

	for (size_t i = 0; i < json_object_array_length(a); i++) {
		char *next = xasprintf("%s%s%s", out, i ? " " : "",
				       json_object_get_string(json_object_array_get_idx(a, i)));
		free(out);
		out = next;
	}
	json_object_put(a);
	return out;
}

/* The value of `name` in the kernel environment, or "" if unset. Caller frees. */
static char *
env_value(const char *name)
{
	struct json_object *env = kernel_env_build(&cfg), *v;
	char *out = xstrdup(json_object_object_get_ex(env, name, &v) ? json_object_get_string(v)
								      : "");
	json_object_put(env);
	return out;
}

START_TEST(index_lines_are_taken)
{
	setup_cfg("# a comment\n--index-url https://pypi.example/simple\n"
		  "  --extra-index-url=https://extra.example/simple  # why\n"
		  "-f /srv/wheels\n--trusted-host pypi.example\nnumpy==1.26\n"
		  "-r other.txt\n--no-binary :all:\n",
		  "");
	char *t = options_text();
	ck_assert_str_eq(t, "--index-url https://pypi.example/simple --extra-index-url "
			    "https://extra.example/simple --find-links /srv/wheels --trusted-host "
			    "pypi.example");
	free(t);
	char *v = env_value("PIP_INDEX_URL");
	ck_assert_str_eq(v, "https://pypi.example/simple");
	free(v);
	v = env_value("PIP_FIND_LINKS");
	ck_assert_str_eq(v, "/srv/wheels");
	free(v);
	v = env_value("PIP_NO_INDEX");
	ck_assert_str_eq(v, "");
	free(v);
	config_free(&cfg);
}
END_TEST

START_TEST(repeated_options_make_lists)
{
	setup_cfg("--find-links /a\n--find-links=/b\n--no-index\n", "");
	char *v = env_value("PIP_FIND_LINKS");
	ck_assert_str_eq(v, "/a /b");
	free(v);
	v = env_value("PIP_NO_INDEX");
	ck_assert_str_eq(v, "1");
	free(v);
	config_free(&cfg);
}
END_TEST

START_TEST(wheelhouse_replaces_the_index)
{
	setup_cfg("--index-url https://pypi.example/simple\n", "/srv/wheelhouse");
	char *t = options_text();
	ck_assert_str_eq(t, "--no-index --find-links /srv/wheelhouse");
	free(t);
	char *v = env_value("PIP_INDEX_URL");
	ck_assert_str_eq(v, "");
	free(v);
	v = env_value("PIP_FIND_LINKS");
	ck_assert_str_eq(v, "/srv/wheelhouse");
	free(v);
	config_free(&cfg);
}
END_TEST

START_TEST(session_packages_on_the_path)
{
	setup_cfg("", "");
	struct json_object *env = kernel_env_build(&cfg), *v;
	kernel_env_session(&cfg, env, "/state/sessions/abc");
	ck_assert(json_object_object_get_ex(env, "PYTHONPATH", &v));
	ck_assert_str_eq(json_object_get_string(v), "/state/sessions/abc/.packages");
	ck_assert(json_object_object_get_ex(env, "PIP_TARGET", &v));
	ck_assert_str_eq(json_object_get_string(v), "/state/sessions/abc/.packages");
	json_object_put(env);
	/* seccomp: started with -I, the kernel sets them itself once locked. */
	cfg.kernel_network_mode = NET_SECCOMP;
	env = kernel_env_build(&cfg);
	kernel_env_session(&cfg, env, "/state/sessions/abc");
	ck_assert(!json_object_object_get_ex(env, "PYTHONPATH", NULL));
	ck_assert(!json_object_object_get_ex(env, "PIP_TARGET", NULL));
	json_object_put(env);
	config_free(&cfg);
}
END_TEST

/* tools_dir on sys.path, then the preloads, then code_prefix in an exec of its own. */
START_TEST(warm_code_has_tools_dir_and_prefix)
{
	setup_cfg("", "");
	char *plain = kernel_warm_code(&cfg);
	ck_assert_ptr_null(strstr(plain, "sys').path.append"));
	ck_assert_ptr_null(strstr(plain, "<code_prefix>"));
	free(plain);
	free(cfg.tools_dir);
	cfg.tools_dir = xstrdup("/srv/it's tools");
	free(cfg.code_prefix);
	cfg.code_prefix = xstrdup("import math\nX = 'a'\\\n");
	strlist_push(&cfg.pool_preload, "numpy");
	char *w = kernel_warm_code(&cfg);
	const char *path = strstr(w, "__import__('sys').path.append('/srv/it\\'s tools')\n");
	const char *imp = strstr(w, "import numpy\n");
	const char *pre = strstr(w, "exec(compile('import math\\nX = \\'a\\'\\\\\\n', "
				    "'<code_prefix>', 'exec'), get_ipython().user_ns)\n");
	ck_assert_msg(path && imp && pre, "%s", w);
	ck_assert(path < imp && imp < pre);
	free(w);
	config_free(&cfg);
}
END_TEST

/* One sidecar as sidecars_start leaves it: port picked, maybe a socket. */
static void
add_sidecar(const char *name, const char *var, const char *host, int port, const char *sock)
{
	cfg.sidecars.v = xreallocarray(cfg.sidecars.v, cfg.sidecars.n + 1, sizeof(*cfg.sidecars.v));
	struct config_sidecar *sc = &cfg.sidecars.v[cfg.sidecars.n++];
	memset(sc, 0, sizeof(*sc));
	sc->name = xstrdup(name);
	sc->url_env_var = xstrdup(var);
	sc->host = xstrdup(host);
	sc->health_path = xstrdup("/health");
	sc->port = port;
	sc->socket = sock != NULL;
	sc->socket_path = sock ? xstrdup(sock) : NULL;
}

/* Kernels find every sidecar: its URL, the first's address, its socket. */
START_TEST(sidecar_urls)
{
	char *v;

	setup_cfg("", "");
	add_sidecar("model", "MODEL_URL", "127.0.0.1", 41234, "/run/codeexecd/sidecars/model.sock");
	add_sidecar("v6", "V6_URL", "::1", 8080, NULL);
	ck_assert_str_eq(v = env_value("MODEL_URL"), "http://127.0.0.1:41234");
	free(v);
	ck_assert_str_eq(v = env_value("V6_URL"), "http://[::1]:8080");
	free(v);
	ck_assert_str_eq(v = env_value("SIDECAR_HOST"), "127.0.0.1");
	free(v);
	ck_assert_str_eq(v = env_value("SIDECAR_PORT"), "41234");
	free(v);
	ck_assert_str_eq(v = env_value("MODEL_URL_SOCKET"), "/run/codeexecd/sidecars/model.sock");
	free(v);
	ck_assert_str_eq(v = env_value("V6_URL_SOCKET"), "");
	free(v);
	/* A seccomp kernel cannot connect() to the path: its worker passes the broker. */
	cfg.kernel_network_mode = NET_SECCOMP;
	ck_assert_str_eq(v = env_value("MODEL_URL_SOCKET"), "");
	free(v);
	ck_assert_str_eq(v = env_value("MODEL_URL"), "http://127.0.0.1:41234");
	free(v);
	config_free(&cfg);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("kernel_env");
	TCase *tc = tcase_create("packages");
	tcase_add_test(tc, index_lines_are_taken);
	tcase_add_test(tc, repeated_options_make_lists);
	tcase_add_test(tc, wheelhouse_replaces_the_index);
	tcase_add_test(tc, session_packages_on_the_path);
	tcase_add_test(tc, warm_code_has_tools_dir_and_prefix);
	tcase_add_test(tc, sidecar_urls);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
