/*
 * test_sandbox.c - START's sandbox fields (network_mode, uid/gid, limits,
 * cgroup): defaults, every rejection, and a full payload.
 */
#include "autoconf.h"

#include <check.h>
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

static Suite *
sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("start");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, rejections);
	tcase_add_test(tc, full_payload);
	tcase_add_test(tc, stage_texts);
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
