/*
 * test_kernelspec.c - which kernel serves (common/kernelspec.c), through
 * config_load: a kernelspec of the environment found before the system's,
 * its argv, language and interrupt_mode; kernel_argv with
 * kernel_language; the kernel's program; and each refusal (no such kernelspec, a spec that sets
 * env or has no {connection_file}, kernel_argv without a language or
 * beside kernel, kernel_language alone, an ipykernel-only key).
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "kernelspec.h"
#include "xmalloc.h"

static char tmpdir[] = "/tmp/test_kernelspec.XXXXXX";

/* Write `text` to tmpdir/name. */
static void
put(const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

/* A kernelspec `name` of the environment (build_dir tmpdir/env) with kernel.json `json`. */
static void
env_spec(const char *name, const char *json)
{
	char *dir = xasprintf("%s/env/share/jupyter/kernels/%s", tmpdir, name);
	char *cmd = xasprintf("mkdir -p %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	char *file = xasprintf("env/share/jupyter/kernels/%s/kernel.json", name);
	put(file, json);
	free(file);
	free(cmd);
	free(dir);
}

/* Load "name: t, build_dir: tmpdir/env" plus `extra`: 0 or -1, with why. */
static int
load(struct config *c, const char *extra, char *why, size_t why_len)
{
	char *text = xasprintf("name: t\nbuild_dir: %s/env\n%s", tmpdir, extra);
	put("c.yaml", text);
	free(text);
	char *path = xasprintf("%s/c.yaml", tmpdir);
	int rc = config_load(path, c, why, why_len);
	free(path);
	return rc;
}

START_TEST(default_is_ipykernel)
{
	struct config c;
	char why[1024];

	ck_assert_msg(load(&c, "", why, sizeof(why)) == 0, "%s", why);
	ck_assert(kernelspec_is_ipykernel(&c));
	ck_assert_str_eq(c.kernel_language, "python");
	ck_assert_int_eq((int)c.kernel_argv.n, 0);
	config_free(&c);
}
END_TEST

START_TEST(env_kernelspec)
{
	struct config c;
	char why[1024];

	env_spec("mine", "{\"argv\": [\"/bin/true\", \"-f\", \"{connection_file}\"],"
			 " \"language\": \"R\", \"interrupt_mode\": \"message\"}");
	ck_assert_msg(load(&c, "kernel: mine\nsession_hibernate_after: 0\ncheckpoint:\n"
			       "  interval_s: 0\n", why, sizeof(why)) == 0, "%s", why);
	ck_assert(!kernelspec_is_ipykernel(&c));
	ck_assert_int_eq((int)c.kernel_argv.n, 3);
	ck_assert_str_eq(c.kernel_argv.v[0], "/bin/true");
	ck_assert_str_eq(c.kernel_argv.v[2], "{connection_file}");
	ck_assert_str_eq(c.kernel_language, "R");
	ck_assert_int_eq(c.kernel_interrupt_message, 1);
	config_free(&c);
	/* The checkpoint defaults are turned off, not refused. */
	ck_assert_msg(load(&c, "kernel: mine\n", why, sizeof(why)) == 0, "%s", why);
	ck_assert(c.checkpoint_interval_s == 0 && c.session_hibernate_after == 0);
	config_free(&c);
	/* seccomp mode too: its filter goes in before exec (486-kernel-seccomp). */
	ck_assert_msg(load(&c, "kernel: mine\nkernel_network_mode: seccomp\n", why,
			   sizeof(why)) == 0, "%s", why);
	config_free(&c);
}
END_TEST

START_TEST(explicit_argv)
{
	struct config c;
	char why[1024];

	ck_assert_msg(load(&c, "kernel_argv: [R, \"{connection_file}\"]\nkernel_language: R\n",
			   why, sizeof(why)) == 0, "%s", why);
	ck_assert(!kernelspec_is_ipykernel(&c));
	ck_assert_str_eq(c.kernel, "kernel_argv");
	ck_assert_str_eq(c.kernel_language, "R");
	config_free(&c);
}
END_TEST

/* Each configuration refused, and a word its message must hold. */
static const struct {
	const char *extra;
	const char *says;
} bad[] = {
	{"kernel: nosuch\n", "no kernelspec nosuch"},
	{"kernel: ../x\n", "is not a kernelspec name"},
	{"kernel: withenv\n", "sets env"},
	{"kernel: noconn\n", "has no {connection_file}"},
	{"kernel: nolang\n", "names no language"},
	{"kernel: notjson\n", "is not a JSON object"},
	{"kernel_argv: [R, \"{connection_file}\"]\n", "kernel_language must say"},
	{"kernel_argv: [R, conn]\nkernel_language: R\n", "no item holds {connection_file}"},
	{"kernel: mine\nkernel_argv: [R, \"{connection_file}\"]\nkernel_language: R\n",
	 "give either kernel"},
	{"kernel_language: R\n", "only with kernel_argv"},
	{"kernel: mine\nkernel_history: disk\n", "kernel_history: is for ipykernel"},
	{"kernel: mine\npool:\n  preload: [json]\n", "the kernel mine runs R"},
};

START_TEST(refused)
{
	struct config c;
	char why[1024];

	env_spec("mine", "{\"argv\": [\"R\", \"{connection_file}\"], \"language\": \"R\"}");
	env_spec("withenv", "{\"argv\": [\"R\", \"{connection_file}\"], \"language\": \"R\","
			    " \"env\": {\"A\": \"1\"}}");
	env_spec("noconn", "{\"argv\": [\"R\", \"conn\"], \"language\": \"R\"}");
	env_spec("nolang", "{\"argv\": [\"R\", \"{connection_file}\"]}");
	env_spec("notjson", "[1, 2");
	ck_assert_int_eq(load(&c, bad[_i].extra, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, bad[_i].says) != NULL, "%s: %s", bad[_i].extra, why);
	ck_assert_msg(strstr(why, "c.yaml:") != NULL, "no FILE:LINE:COLUMN: %s", why);
}
END_TEST

/* The kernel's program: absolute and executable, or on the kernel's PATH once built. */
START_TEST(program_checked)
{
	struct config c;
	char why[1024];

	ck_assert_int_eq(load(&c, "kernel_argv: [/nonexistent/k, \"{connection_file}\"]\n"
				  "kernel_language: R\n", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "the kernel's program /nonexistent/k") != NULL, "%s", why);
	/* Not built yet: the environment may still provide a bare name. */
	ck_assert_msg(load(&c, "kernel_argv: [nosuch-kernel-prog, \"{connection_file}\"]\n"
			       "kernel_language: R\n", why, sizeof(why)) == 0, "%s", why);
	config_free(&c);
	char *cmd = xasprintf("mkdir -p %s/env/bin", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	ck_assert_int_eq(load(&c, "kernel_argv: [nosuch-kernel-prog, \"{connection_file}\"]\n"
				  "kernel_language: R\n", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "is in none of") != NULL, "%s", why);
}
END_TEST

int
main(void)
{
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	Suite *s = suite_create("kernelspec");
	TCase *tc = tcase_create("resolve");
	tcase_add_test(tc, default_is_ipykernel);
	tcase_add_test(tc, env_kernelspec);
	tcase_add_test(tc, explicit_argv);
	tcase_add_loop_test(tc, refused, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, program_checked); /* last: it makes the environment's bin */
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char *rm = xasprintf("rm -rf %s", tmpdir);
	(void)!system(rm);
	free(rm);
	return failed ? 1 : 0;
}
