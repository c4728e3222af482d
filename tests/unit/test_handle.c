/*
 * test_handle.c - handle.c: handles minted with and without node_name,
 * their random digits, and another node's handle told from this node's,
 * an untagged one and a malformed tag.
 */
#include "autoconf.h"

#include <check.h>
#include <ctype.h>
#include <json-c/json.h>
#include <string.h>

#include "handle.h"

/* Assert `h` is `tag` (or nothing), then HANDLE_RANDOM_LEN lowercase hex digits. */
static void
assert_handle(const char *h, const char *tag)
{
	size_t n = tag[0] ? strlen(tag) + 1 : 0;

	ck_assert_uint_eq(strlen(h), n + HANDLE_RANDOM_LEN);
	if (n)
		ck_assert(strncmp(h, tag, n - 1) == 0 && h[n - 1] == '.');
	for (size_t i = n; h[i]; i++)
		ck_assert(isxdigit((unsigned char)h[i]) && !isupper((unsigned char)h[i]));
	ck_assert_str_eq(handle_random(h), h + n);
}

START_TEST(mint)
{
	char a[HANDLE_LEN + 1], b[HANDLE_LEN + 1];

	handle_init("");
	handle_mint(a);
	assert_handle(a, "");
	handle_init("node-1");
	ck_assert_str_eq(handle_node(), "node-1");
	handle_mint(a);
	handle_mint(b);
	assert_handle(a, "node-1");
	ck_assert_str_ne(a, b);
	/* The longest tag fits. */
	handle_init("abcdefghijklmnopqrstuvwxyz012345");
	handle_mint(a);
	assert_handle(a, "abcdefghijklmnopqrstuvwxyz012345");
}
END_TEST

START_TEST(elsewhere)
{
	char node[CONFIG_NODE_NAME_MAX + 1] = "";

	handle_init("a");
	ck_assert(handle_elsewhere("b.0123456789abcdef0123456789abcdef", node, sizeof(node)));
	ck_assert_str_eq(node, "b");
	/* This node's, untagged, or not a tag: not another node's. */
	ck_assert(!handle_elsewhere("a.0123456789abcdef0123456789abcdef", node, sizeof(node)));
	ck_assert(!handle_elsewhere("0123456789abcdef0123456789abcdef", node, sizeof(node)));
	ck_assert(!handle_elsewhere(".0123", node, sizeof(node)));
	ck_assert(!handle_elsewhere("x y.0123", node, sizeof(node)));
	ck_assert(!handle_elsewhere("abcdefghijklmnopqrstuvwxyz0123456.0", node, sizeof(node)));
	/* A prefix of ours is another tag. */
	handle_init("ab");
	ck_assert(handle_elsewhere("a.0", node, sizeof(node)));
	ck_assert_str_eq(node, "a");
	/* A single node (no node_name) names no other: all it lacks is unknown. */
	handle_init("");
	ck_assert(!handle_elsewhere("c.0", node, sizeof(node)));
	ck_assert(!handle_elsewhere("0123", node, sizeof(node)));
}
END_TEST

START_TEST(arguments)
{
	char node[CONFIG_NODE_NAME_MAX + 1];
	const char *arg = NULL;

	handle_init("a");
	struct json_object *args = json_tokener_parse(
		"{\"code\":\"b.1\",\"job_id\":\"a.1\",\"batch_id\":\"c.2\"}");
	ck_assert(handle_args_elsewhere(args, &arg, node, sizeof(node)));
	ck_assert_str_eq(arg, "batch_id");
	ck_assert_str_eq(node, "c");
	json_object_put(args);
	args = json_tokener_parse("{\"code\":\"b.1\",\"execution_session_id\":\"a.1\"}");
	ck_assert(!handle_args_elsewhere(args, &arg, node, sizeof(node)));
	ck_assert(!handle_args_elsewhere(NULL, &arg, node, sizeof(node)));
	json_object_put(args);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("handle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, mint);
	tcase_add_test(tc, elsewhere);
	tcase_add_test(tc, arguments);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
