/*
 * test_sandbox.c - START's sandbox fields (network_mode, uid/gid, limits,
 * cgroup): defaults, every rejection, and a full payload; what an isolated
 * kernel's mount namespace covers and keeps.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc_msg.h"
#include "sandbox.h"

/*
 * Decode the sandbox members in json as a START (the other members added)
 * and fill *sb from it; the complaint of the codec or the sandbox, or NULL.
 */
static const char *
parse(struct sandbox *sb, const char *json)
{
	static char err[ERR_LEN];
	struct ipc_msg m = {.hdr = {.type = IPC_START}};
	struct ipc_start st;
	const char *bad = err;

	m.payload = json_tokener_parse(json);
	ck_assert_msg(m.payload != NULL, "bad test JSON %s", json);
	json_object_object_add(m.payload, "argv", json_tokener_parse("[\"/bin/true\"]"));
	json_object_object_add(m.payload, "env", json_object_new_object());
	json_object_object_add(m.payload, "cwd", json_object_new_string("/tmp"));
	json_object_object_add(m.payload, "runtime_dir", json_object_new_string("/tmp/rt"));
	memset(sb, 0, sizeof(*sb));
	if (ipc_start_decode(&m, &st, err, sizeof(err)) == 0)
		bad = sandbox_from_start(sb, &st, err, sizeof(err)) == 0 ? NULL : err;
	ipc_start_free(&st);
	json_object_put(m.payload);
	return bad;
}

START_TEST(defaults)
{
	struct sandbox sb;

	ck_assert_ptr_null(parse(&sb, "{}"));
	ck_assert_int_eq(sb.mode, NET_INHERIT);
	ck_assert_int_eq(sb.has_id, 0);
	ck_assert_int_eq(sb.has_cgroup, 0);
	ck_assert_uint_eq(sb.nofile, 0);
	sandbox_free(&sb);
}
END_TEST

START_TEST(rejections)
{
	static const char *const cases[][2] = {
		{"{\"network_mode\": \"none\"}", "network_mode: must be one of"},
		{"{\"network_mode\": 1}", "network_mode: must be one of"},
		{"{\"uid\": 1000}", "uid and gid must come together"},
		{"{\"uid\": -1, \"gid\": 5}", "uid: must be an integer in [1, "},
		{"{\"uid\": 1.5, \"gid\": 5}", "uid: must be an integer in [1, "},
		{"{\"uid\": 0, \"gid\": 0}", "uid: must be an integer in [1, "},
		{"{\"limits\": []}", "limits: must be a JSON object"},
		{"{\"limits\": {\"pids\": -3}}", "limits.pids: must be an integer in [0, "},
		{"{\"limits\": {\"memory_mb\": \"1G\"}}", "limits.memory_mb: must be an integer"},
		{"{\"limits\": {\"memory_mb\": 100}}", "need a cgroup layout"},
		{"{\"cgroup\": {\"name\": \"../up\"}}", "cgroup.name: must be one path component"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sandbox sb;
		const char *bad = parse(&sb, cases[i][0]);
		ck_assert_msg(bad && strstr(bad, cases[i][1]), "%s: got %s", cases[i][0],
			      bad ? bad : "accepted");
		sandbox_free(&sb);
	}
}
END_TEST

START_TEST(full_payload)
{
	struct sandbox sb;
	const char *bad = parse(&sb,
		"{\"network_mode\": \"seccomp\", \"uid\": 61000, \"gid\": 61001,"
		" \"limits\": {\"memory_mb\": 256, \"pids\": 64, \"cpu\": 0.5, \"nofile\": 200,"
		" \"fsize_mb\": 5},"
		" \"cgroup\": {\"name\": \"k-1\", \"pids\": {\"version\": 1, \"parent\": \"/p\"}}}");

	if (geteuid() != 0) {
		ck_assert_str_eq(bad, "uid/gid need the worker to run as root (or with CAP_SETUID and CAP_SETGID)");
		sandbox_free(&sb);
		return;
	}
	ck_assert_ptr_null(bad);
	ck_assert_int_eq(sb.mode, NET_SECCOMP);
	ck_assert_int_eq(sb.has_id, 1);
	ck_assert_uint_eq(sb.uid, 61000);
	ck_assert_uint_eq(sb.gid, 61001);
	ck_assert_uint_eq(sb.limits.memory_mb, 256);
	ck_assert_uint_eq(sb.limits.pids, 64);
	ck_assert(sb.limits.cpu == 0.5);
	ck_assert_uint_eq(sb.nofile, 200);
	ck_assert_uint_eq(sb.fsize, 5u << 20);
	ck_assert_str_eq(sb.cgroup_name, "k-1");
	ck_assert_int_eq(sb.layout.version[CGROUP_PIDS], 1);
	ck_assert_str_eq(net_mode_names[sb.mode], "seccomp");
	sandbox_free(&sb);
}
END_TEST

START_TEST(stage_texts)
{
	ck_assert(strstr(sandbox_stage_text(SANDBOX_STAGE_USERNS), "isolated") != NULL);
	ck_assert(strstr(sandbox_stage_text(SANDBOX_STAGE_NNP), "no_new_privs") != NULL);
	ck_assert_str_eq(sandbox_stage_text(999), "cannot set up the kernel process");
}
END_TEST

/* Make path (under the test's directory) as a directory, or as a file when `file`. */
static char *
made(const char *top, const char *rel, int file)
{
	char *path = NULL;

	ck_assert(asprintf(&path, "%s/%s", top, rel) > 0);
	if (file) {
		FILE *f = fopen(path, "w");
		ck_assert(f != NULL);
		fclose(f);
	} else {
		char *cmd = NULL;
		ck_assert(asprintf(&cmd, "mkdir -p '%s'", path) > 0);
		ck_assert_int_eq(system(cmd), 0);
		free(cmd);
	}
	return path;
}

/* The cover of the keep `path`, or -2 when it is not kept. */
static int
kept_under(const struct sandbox_launch *ln, const char *path)
{
	for (int i = 0; i < ln->n_keep; i++)
		if (strcmp(ln->keep_path[i], path) == 0)
			return ln->keep_under[i];
	return -2;
}

START_TEST(isolated_keeps)
{
	char tmpl[] = "/tmp/cxd-keep.XXXXXX", *top = mkdtemp(tmpl), why[ERR_LEN] = "";
	ck_assert(top != NULL);
	char *state = made(top, "state", 0), *run = made(top, "run", 0);
	char *cwd = made(top, "state/sessions/a", 0), *home = made(top, "state/sessions/a/h", 0);
	char *rt = made(top, "run/w1", 0), *env = made(top, "env/bin", 0);
	char *sc = made(top, "run/sidecars", 0), *sock = made(top, "run/sidecars/m.sock", 1);
	char *py = made(top, "env/bin/python", 1);
	free(made(top, "state/sessions/b", 0));
	char *hide[] = {state, run, NULL}, *argv[] = {py, NULL}, *e1 = NULL, *e2 = NULL, *e3 = NULL;
	ck_assert(asprintf(&e1, "M_SOCKET=%s", sock) > 0 && asprintf(&e2, "HOME=%s", home) > 0 &&
		  asprintf(&e3, "PATH=%s:/usr/bin", env) > 0);
	char *envp[] = {e1, e2, e3, "TMPDIR=/tmp", NULL};
	struct sandbox sb = {.mode = NET_ISOLATED, .hide_paths = hide};
	struct sandbox_launch ln = {.ll_fd = -1};

	ck_assert_int_eq(sandbox_isolated_prepare(&sb, argv, envp, cwd, rt, &ln, why, sizeof(why)),
			 0);
	/* The daemon's directories are covers after the private ones (shorter first). */
	ck_assert_int_eq(ln.n_hide_dir, 2);
	ck_assert_str_eq(sandbox_cover_path(&ln, SANDBOX_NPRIVATE), run);
	ck_assert_str_eq(sandbox_cover_path(&ln, SANDBOX_NPRIVATE + 1), state);
	ck_assert_int_eq(kept_under(&ln, cwd), SANDBOX_NPRIVATE + 1);
	ck_assert_int_eq(kept_under(&ln, rt), SANDBOX_NPRIVATE);
	ck_assert_int_eq(kept_under(&ln, sc), SANDBOX_NPRIVATE);
	/* The interpreter's prefix, under /tmp; nothing nested, nothing that is a cover. */
	env[strlen(env) - 4] = 0;
	ck_assert_int_eq(kept_under(&ln, env), 0);
	ck_assert_int_eq(ln.n_keep, 4);
	sandbox_launch_free(&ln);
	char *cmd = NULL;
	ck_assert(asprintf(&cmd, "rm -rf '%s'", top) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(state), free(run), free(cwd), free(home), free(rt), free(env), free(sc), free(sock);
	free(py), free(e1), free(e2), free(e3);
}
END_TEST

/* More directories to keep than SANDBOX_KEEP_MAX: the kernel does not start. */
START_TEST(isolated_keep_overflow)
{
	char tmpl[] = "/tmp/cxd-keep.XXXXXX", *top = mkdtemp(tmpl), why[ERR_LEN] = "";
	char *envp[SANDBOX_KEEP_MAX + 2] = {NULL}, *argv[] = {"/bin/true", NULL};
	struct sandbox sb = {.mode = NET_ISOLATED};
	struct sandbox_launch ln = {.ll_fd = -1};

	ck_assert(top != NULL);
	for (int i = 0; i <= SANDBOX_KEEP_MAX; i++) {
		char rel[16];
		snprintf(rel, sizeof(rel), "d%d", i);
		char *d = made(top, rel, 0);
		ck_assert(asprintf(&envp[i], "D%d=%s", i, d) > 0);
		free(d);
	}
	ck_assert_int_eq(sandbox_isolated_prepare(&sb, argv, envp, "/", "/", &ln, why, sizeof(why)),
			 -1);
	ck_assert(strstr(why, "directories") != NULL);
	sandbox_launch_free(&ln);
	for (int i = 0; i <= SANDBOX_KEEP_MAX; i++)
		free(envp[i]);
	char *cmd = NULL;
	ck_assert(asprintf(&cmd, "rm -rf '%s'", top) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

static Suite *
sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("start");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, rejections);
	tcase_add_test(tc, full_payload);
	tcase_add_test(tc, stage_texts);
	tcase_add_test(tc, isolated_keeps);
	tcase_add_test(tc, isolated_keep_overflow);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sandbox_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
