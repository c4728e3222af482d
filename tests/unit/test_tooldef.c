/*
 * test_tooldef.c - tool definitions (issue 15): `tools:` in the
 * configuration and tools_dir's files, every validation error with its
 * FILE:LINE:COLUMN, and the signature an agent reads.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "tooldef.h"
#include "xmalloc.h"

static char tmpdir[] = "/tmp/test_tooldef.XXXXXX";

/* Write `text` to tmpdir/name; returns the path (caller frees). */
static char *
put(const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#define GOOD_TOOL                                                                                  \
	"  - name: mol_weight\n"                                                                   \
	"    description: Molecular weight from SMILES.\n"                                         \
	"    module: chem.tools\n"                                                                 \
	"    category: chemistry\n"                                                                \
	"    required_parameters:\n"                                                               \
	"      - {name: smiles, type: str, description: the molecule}\n"                          \
	"    optional_parameters:\n"                                                               \
	"      - {name: exact, type: bool, description: exact mass, default: false}\n"             \
	"      - {name: unit, type: str, description: unit, default: g/mol}\n"                     \
	"      - {name: digits, type: int | None, description: rounding, default: null}\n"         \
	"    return_spec: {type: float, description: the weight}\n"                               \
	"    examples:\n"                                                                          \
	"      - mol_weight('CCO')\n"

START_TEST(inline_tools_load)
{
	char *path = put("good.yaml", "name: x\ntools:\n" GOOD_TOOL);
	struct config c;
	char why[2048];

	ck_assert_msg(config_load(path, &c, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(c.tools.n, 1);
	const struct tool_def *d = &c.tools.v[0];
	ck_assert_str_eq(d->name, "mol_weight");
	ck_assert_str_eq(d->module, "chem.tools");
	ck_assert_str_eq(d->category, "chemistry");
	ck_assert_uint_eq(d->n_params, 4);
	ck_assert_uint_eq(d->n_required, 1);
	ck_assert_uint_eq(d->line, 3);
	ck_assert_str_eq(d->file, path);
	ck_assert_uint_eq(d->n_examples, 1);
	char *sig = tooldef_signature(d);
	ck_assert_str_eq(sig, "mol_weight(smiles: str, exact: bool = False, unit: str = 'g/mol', "
			      "digits: int | None = None) -> float");
	free(sig);
	config_free(&c);
	free(path);
}
END_TEST

START_TEST(tools_dir_loads_and_finds_duplicates)
{
	char *dir = xasprintf("%s/tools.d", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	free(put("tools.d/a.yaml", "tools:\n" GOOD_TOOL));
	free(put("tools.d/b.yaml",
		 "- name: gc\n  description: GC content\n  module: bio\n"
		 "  return_spec: {type: float}\n"));
	free(put("tools.d/notes.txt", "not read"));
	char *cfgtext = xasprintf("name: x\ntools_dir: %s\n", dir);
	char *path = put("dir.yaml", cfgtext);
	struct config c;
	char why[2048];

	ck_assert_msg(config_load(path, &c, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(c.tools.n, 2);
	ck_assert_str_eq(c.tools.v[1].name, "gc");
	ck_assert_str_eq(c.tools.v[1].return_description, "");
	config_free(&c);

	/* The same name inline and in the directory: named with both places. */
	free(cfgtext);
	cfgtext = xasprintf("name: x\ntools_dir: %s\ntools:\n" GOOD_TOOL, dir);
	free(path);
	path = put("dup.yaml", cfgtext);
	ck_assert_int_eq(config_load(path, &c, why, sizeof(why)), -1);
	char *want = xasprintf("%s/a.yaml:2:11: tools item 1 (mol_weight): duplicate tool name "
			       "mol_weight (first at %s:4)",
			       dir, path);
	ck_assert_msg(strstr(why, want) != NULL, "%s", why);
	free(want);
	free(cfgtext);
	free(path);
	free(dir);
}
END_TEST

/* A string default is written as pylit.h's literal: quotes escaped, non-ASCII as \\u. */
START_TEST(defaults_are_python_literals)
{
	char *path = put("lit.yaml", "name: x\ntools:\n"
				     "  - name: f\n    description: d\n    module: m\n"
				     "    return_spec: {type: str}\n"
				     "    optional_parameters:\n"
				     "      - {name: s, type: str, description: d, default: \"it's\\u00e9\\r\"}\n"
				     "      - {name: t, type: list, description: d, default: [a, 1, no]}\n");
	struct config c;
	char why[2048];

	ck_assert_msg(config_load(path, &c, why, sizeof(why)) == 0, "%s", why);
	char *sig = tooldef_signature(&c.tools.v[0]);
	ck_assert_str_eq(sig, "f(s: str = 'it\\'s\\u00e9\\r', t: list = ['a', 1, False]) -> str");
	free(sig);
	config_free(&c);
	free(path);
}
END_TEST

/* A bad definition and the error it must give, after "FILE:". */
static const struct {
	const char *yaml;
	const char *error;
} bad[] = {
	{"tools:\n  - name: 1abc\n    description: d\n    module: m\n    return_spec: {type: int}\n",
	 "3:11: tools item 1: name: \"1abc\" is not a Python identifier"},
	{"tools:\n  - description: d\n    module: m\n    return_spec: {type: int}\n",
	 "3:5: tools item 1: name is required"},
	{"tools:\n  - name: f\n    module: m\n    return_spec: {type: int}\n",
	 "3:5: tools item 1 (f): description is required"},
	{"tools:\n  - name: f\n    description: d\n    return_spec: {type: int}\n",
	 "3:5: tools item 1 (f): module is required"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n",
	 "3:5: tools item 1 (f): return_spec is required"},
	{"tools:\n  - name: f\n    description: d\n    module: my-mod\n    return_spec: {type: int}\n",
	 "5:13: tools item 1 (f): module: \"my-mod\" is not a Python module name"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: int}\n"
	 "    required_parameters:\n      - {name: x, type: list of str, description: d}\n",
	 "8:25: tools item 1 (f): required_parameters item 1: type: \"list of str\" is not a "
	 "Python type expression"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: 'int]'}\n",
	 "6:25: tools item 1 (f): return_spec: type: \"int]\" is not a Python type expression"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: int}\n"
	 "    optional_parameters:\n      - {name: x, type: int, description: d}\n",
	 "8:9: tools item 1 (f): optional_parameters item 1: default is required for an "
	 "optional parameter"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: int}\n"
	 "    required_parameters:\n      - {name: x, type: int, description: d, default: 1}\n",
	 "8:55: tools item 1 (f): required_parameters item 1: default: a required parameter has "
	 "no default"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: int}\n"
	 "    required_parameters:\n      - {name: x, type: int, description: d}\n"
	 "      - {name: x, type: str, description: e}\n",
	 "9:9: tools item 1 (f): required_parameters item 2: parameter x is listed twice"},
	{"tools:\n  - name: f\n    descripton: d\n    module: m\n    return_spec: {type: int}\n",
	 "4:5: tools item 1 (f): unknown field \"descripton\" (did you mean description?)"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: int}\n"
	 "  - name: f\n    description: e\n    module: m\n    return_spec: {type: int}\n",
	 "7:11: tools item 2 (f): duplicate tool name f (first at "},
	{"tools: {name: f}\n", "2:8: tools: expected a list of tool definitions"},
	/* The Tools keys besides the definitions. */
	{"tool_search_backend: azure_ai_search\n",
	 "2:22: tool_search_backend azure_ai_search needs azure_ai_search.endpoint, .index and "
	 ".api_key_file"},
	{"azure_ai_search:\n  endpoint: http://example.com\n",
	 "3:13: azure_ai_search.endpoint: \"http://example.com\": plain http:// is allowed only to "
	 "a loopback address"},
	{"azure_ai_search:\n  endpoint: https://x.search.windows.net/indexes\n",
	 "3:13: azure_ai_search.endpoint: \"https://x.search.windows.net/indexes\": expected "
	 "https://HOST[:PORT], with no path"},
	{"azure_ai_search:\n  index: Tools\n",
	 "3:10: azure_ai_search.index: \"Tools\" is not an Azure AI Search index name"},
	{"tool_search_backend: sqlite\n",
	 "2:22: tool_search_backend: expected one of bm25, azure_ai_search; got \"sqlite\""},
	{"tools_dir: tools\n", "2:12: tools_dir: \"tools\" is not an absolute path"},
	{"tools:\n  - name: f\n    description: [d]\n    module: m\n    return_spec: {type: int}\n",
	 "4:18: tools item 1 (f): description: expected a single value, got a list"},
	/* The key table's scalar grammar: a YAML boolean is no text, a null no value. */
	{"tools:\n  - name: f\n    description: yes\n    module: m\n    return_spec: {type: int}\n",
	 "4:18: tools item 1 (f): description: expected a string, got the YAML boolean yes; quote "
	 "it if you mean the text"},
	{"tools:\n  - name: f\n    description: d\n    module: m\n    return_spec: {type: int}\n"
	 "    examples: [~]\n",
	 "7:16: tools item 1 (f): examples item 1: snippet: has no value"},
};

START_TEST(errors)
{
	char *text = xasprintf("name: x\n%s", bad[_i].yaml);
	char *path = put("bad.yaml", text);
	struct config c;
	char why[2048];

	ck_assert_int_eq(config_load(path, &c, why, sizeof(why)), -1);
	char *want = xasprintf("%s:%s", path, bad[_i].error);
	ck_assert_msg(strstr(why, want) != NULL, "case %d: got\n%s\nwanted\n%s", _i, why, want);
	free(want);
	free(path);
	free(text);
}
END_TEST

START_TEST(every_error_is_reported)
{
	char *path = put("many.yaml", "name: x\ntools:\n"
				      "  - name: a\n    description: d\n    module: m\n"
				      "  - name: b\n    module: m\n    return_spec: {type: int}\n");
	struct config c;
	char why[2048];

	ck_assert_int_eq(config_load(path, &c, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, ":3:5: tools item 1 (a): return_spec is required") != NULL,
		      "%s", why);
	ck_assert_msg(strstr(why, ":6:5: tools item 2 (b): description is required") != NULL,
		      "%s", why);
	free(path);
}
END_TEST

START_TEST(types)
{
	static const char *const good[] = {
		"str", "int | None", "list[str]", "dict[str, float]", "numpy.ndarray",
		"tuple[int, ...]", "Callable[[int, str], float]", "Literal['a', 'b']",
		"Optional[pandas.DataFrame]", "None",
	};
	static const char *const no[] = {
		"", "list of str", "int]", "list[", "dict[str,]", "a..b", "3x", "int |",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(tooldef_type_ok(good[i]), "%s refused", good[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!tooldef_type_ok(no[i]), "%s accepted", no[i]);
}
END_TEST

int
main(void)
{
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	Suite *s = suite_create("tooldef");
	TCase *tc = tcase_create("load");
	tcase_add_test(tc, inline_tools_load);
	tcase_add_test(tc, tools_dir_loads_and_finds_duplicates);
	tcase_add_test(tc, defaults_are_python_literals);
	tcase_add_loop_test(tc, errors, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, every_error_is_reported);
	tcase_add_test(tc, types);
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
