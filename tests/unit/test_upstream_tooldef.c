/*
 * test_upstream_tooldef.c - code mode's upstream tools as registry entries
 * (supervisor/front/upstream_tooldef.c): the function and parameter names
 * the kernel's package makes, the signature, types, defaults, example and
 * return, and that an entry ranks among the labelled registry's domain
 * tools (unit/data/tools) exactly as a domain tool with the same text.
 */
#include "autoconf.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tooldef.h"
#include "toolreg.h"
#include "upstream_tooldef.h"
#include "xmalloc.h"

/* search_issues as the SDK's McpServer lists it (tests/client/upstream_server.mjs). */
static const char search_issues[] =
	"{\"name\":\"search_issues\",\"description\":\"Find issues whose title holds the query.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"limit\":{\"type\":\"integer\",\"default\":3,\"description\":\"How many to return\"},"
	"\"query\":{\"type\":\"string\",\"description\":\"Words to look for\"}},"
	"\"required\":[\"query\"]},"
	"\"outputSchema\":{\"type\":\"object\",\"properties\":{\"items\":{\"type\":\"array\"},"
	"\"total\":{\"type\":\"number\"}}}}";

/* The same tool written as a domain tool of the configuration. */
static const char search_issues_yaml[] =
	"tools:\n"
	"  - name: search_issues\n"
	"    description: Find issues whose title holds the query.\n"
	"    module: codeexec_upstreams.test\n"
	"    category: test\n"
	"    required_parameters:\n"
	"      - {name: query, type: str, description: Words to look for}\n"
	"    optional_parameters:\n"
	"      - {name: limit, type: int, description: How many to return, default: 3}\n"
	"    return_spec: {type: dict, description: 'with items, total'}\n";

static struct tool_def
make(const char *json)
{
	struct json_object *o = json_tokener_parse(json);
	struct tool_def d;

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(upstream_tooldef("test", o, &d), 0);
	json_object_put(o);
	return d;
}

START_TEST(idents)
{
	static const char *const table[][2] = {
		{"search_issues", "search_issues"}, {"search-issues", "search_issues"},
		{"a.b c", "a_b_c"}, {"1st", "_1st"}, {"class", "class_"}, {"None", "None_"},
		{"", "_"}, {"Ok9", "Ok9"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		char *s = upstream_ident(table[i][0]);
		ck_assert_msg(strcmp(s, table[i][1]) == 0, "%s -> %s, not %s", table[i][0], s,
			      table[i][1]);
		free(s);
	}
}
END_TEST

START_TEST(entry_fields)
{
	struct tool_def d = make(search_issues);
	char *sig = upstream_tooldef_signature(&d);

	ck_assert_str_eq(d.name, "search_issues");
	ck_assert_str_eq(d.module, "codeexec_upstreams.test");
	ck_assert_str_eq(d.category, "test");
	ck_assert(upstream_tooldef_is(&d));
	ck_assert_str_eq(upstream_tooldef_upstream(&d), "test");
	/* Required first, as the warm-up's inspect.Signature orders them. */
	ck_assert_uint_eq(d.n_params, 2);
	ck_assert_uint_eq(d.n_required, 1);
	ck_assert_str_eq(d.params[0].name, "query");
	ck_assert_ptr_null(d.params[0].def);
	ck_assert_str_eq(d.params[1].def, "3");
	ck_assert_str_eq(sig, "test.search_issues(*, query: str, limit: int = 3) -> dict");
	ck_assert_str_eq(d.return_description, "with items, total");
	ck_assert_uint_eq(d.n_examples, 1);
	ck_assert_str_eq(d.examples[0],
			 "from codeexec_upstreams import test\nresult = test.search_issues(query=...)");
	free(sig);
	upstream_tooldef_free(&d);
}
END_TEST

START_TEST(entry_odd_schemas)
{
	struct tool_def d = make("{\"name\":\"get-it\",\"inputSchema\":{\"properties\":{"
				 "\"a-b\":{\"type\":[\"string\",\"null\"]},\"a_b\":{},"
				 "\"flag\":{\"type\":\"boolean\",\"default\":true},"
				 "\"x\":{\"type\":\"weird\"}}}}");
	char *sig = upstream_tooldef_signature(&d);

	/* a-b and a_b are one identifier: the first is kept, as the warm-up does. */
	ck_assert_str_eq(sig, "test.get_it(*, a_b: str | None = None, flag: bool = True, "
			      "x: Any = None) -> Any");
	ck_assert_str_eq(d.description, "");
	ck_assert_str_eq(d.examples[0], "from codeexec_upstreams import test\nresult = test.get_it()");
	free(sig);
	upstream_tooldef_free(&d);

	d = make("{\"name\":\"none\"}");
	sig = upstream_tooldef_signature(&d);
	ck_assert_str_eq(sig, "test.none() -> Any");
	free(sig);
	upstream_tooldef_free(&d);

	struct json_object *bad = json_tokener_parse("{\"description\":\"no name\"}");
	ck_assert_int_eq(upstream_tooldef("test", bad, &d), -1);
	ck_assert_ptr_null(d.name);
	json_object_put(bad);
}
END_TEST

/* The labelled registry plus `extra`, into all (its own array, extra's fields shared). */
static struct toolreg *
with(const struct tooldefs *base, const struct tool_def *extra, struct tooldefs *all)
{
	all->n = base->n + 1;
	all->v = xcalloc(all->n, sizeof(*all->v));
	memcpy(all->v, base->v, base->n * sizeof(*base->v));
	all->v[base->n] = *extra;
	return toolreg_build(all);
}

START_TEST(ranked_as_domain_tool)
{
	static const char *const queries[] = {
		"find issues by title", "searching issues", "search", "query words", "test issues",
		"issue tracker search", "substructure search",
	};
	char why[4096], dir[] = "/tmp/test_upstream_tooldef.XXXXXX";
	const char *src = getenv("srcdir");
	struct tooldefs base = {0}, yaml = {0}, a, b;
	struct tool_def up = make(search_issues);

	char *data = xasprintf("%s/unit/data/tools", src ? src : ".");
	ck_assert_msg(tooldefs_load_dir(&base, data, why, sizeof(why)) == 0, "%s", why);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *file = xasprintf("%s/t.yaml", dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(search_issues_yaml, f);
	fclose(f);
	ck_assert_msg(tooldefs_load_dir(&yaml, dir, why, sizeof(why)) == 0, "%s", why);
	unlink(file);
	rmdir(dir);

	struct toolreg *ra = with(&base, &up, &a), *rb = with(&base, &yaml.v[0], &b);
	int found_stem = 0;
	for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
		struct toolreg_hit ha[10], hb[10];
		size_t na = toolreg_search(ra, queries[q], NULL, ha, 10);
		size_t nb = toolreg_search(rb, queries[q], NULL, hb, 10);
		ck_assert_uint_eq(na, nb);
		for (size_t i = 0; i < na; i++) {
			ck_assert_msg(ha[i].tool == hb[i].tool && ha[i].score == hb[i].score,
				      "%s: hit %zu differs", queries[q], i);
			if (ha[i].tool == base.n && strcmp(queries[q], "searching issues") == 0)
				found_stem = i == 0;
		}
	}
	ck_assert_msg(found_stem, "'searching issues' ranks search_issues first");
	/* category keeps to one upstream's tools. */
	struct toolreg_hit h[5];
	size_t n = toolreg_search(ra, "search", "test", h, 5);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(h[0].tool, base.n);
	toolreg_free(ra);
	toolreg_free(rb);
	free(a.v);
	free(b.v);
	tooldefs_free(&yaml);
	tooldefs_free(&base);
	upstream_tooldef_free(&up);
	free(file);
	free(data);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("upstream_tooldef");
	TCase *tc = tcase_create("entries");
	tcase_add_test(tc, idents);
	tcase_add_test(tc, entry_fields);
	tcase_add_test(tc, entry_odd_schemas);
	tcase_add_test(tc, ranked_as_domain_tool);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
