/*
 * test_toolreg_azure.c - tool_search_backend azure_ai_search: the request
 * it builds (URL, JSON body, OData filter) and its reading of answers in
 * the REST API's documented shape. The exchange with a server is the
 * system test 431-azure-search's (a loopback server, never the service).
 */
#include "autoconf.h"

#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "secret_file.h"
#include "toolreg.h"
#include "toolreg_azure.h"
#include "xmalloc.h"

START_TEST(url)
{
	char *u = azure_search_url("https://demo.search.windows.net/", "tools", "2023-11-01");
	ck_assert_str_eq(u, "https://demo.search.windows.net/indexes/tools/docs/search"
			    "?api-version=2023-11-01");
	free(u);
}
END_TEST

START_TEST(body)
{
	char *b = azure_search_body("molar \"mass\"", NULL, 5);
	struct json_object *o = json_tokener_parse(b);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "search")),
			 "molar \"mass\"");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(o, "top")), 5);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "select")), "name");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "searchMode")), "any");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "queryType")), "simple");
	ck_assert(!json_object_object_get_ex(o, "filter", NULL));
	json_object_put(o);
	free(b);

	/* A category is an OData filter, its quotes doubled. */
	b = azure_search_body("x", "chemist's", 3);
	o = json_tokener_parse(b);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "filter")),
			 "category eq 'chemist''s'");
	json_object_put(o);
	free(b);
}
END_TEST

START_TEST(parse)
{
	char **names;
	double *scores;
	size_t n;
	char why[256];

	ck_assert_int_eq(azure_search_parse(
				 "{\"@odata.context\":\"https://x/indexes('tools')/$metadata#docs(*)\","
				 "\"value\":[{\"@search.score\":2.5,\"name\":\"mol_weight\"},"
				 "{\"@search.score\":1.25,\"name\":\"gc_content\"},"
				 "{\"@search.score\":1.0}]}",
				 &names, &scores, &n, why, sizeof(why)),
			 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(names[0], "mol_weight");
	ck_assert_str_eq(names[1], "gc_content");
	ck_assert_ptr_null(names[2]);
	ck_assert(scores[0] == 2.5 && scores[1] == 1.25);
	strv_free(names);
	free(scores);

	ck_assert_int_eq(azure_search_parse("{\"value\":[]}", &names, &scores, &n, why, sizeof(why)),
			 0);
	ck_assert_uint_eq(n, 0);
	strv_free(names);
	free(scores);

	ck_assert_int_eq(azure_search_parse("{\"error\":{\"message\":\"no\"}}", &names, &scores, &n,
					    why, sizeof(why)),
			 -1);
	ck_assert_ptr_nonnull(strstr(why, "\"value\" array"));
	ck_assert_int_eq(azure_search_parse("not json", &names, &scores, &n, why, sizeof(why)), -1);
}
END_TEST

/* The key file: refused when others may read it; its first line is the key. */
START_TEST(key_file)
{
	char dir[] = "/tmp/test_azure.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *path = xasprintf("%s/key", dir);
	FILE *f = fopen(path, "w");
	fputs("s3cr3tKEY==\n", f);
	fclose(f);
	struct config c;
	char why[512];
	config_defaults(&c);
	c.tool_search_backend = TOOL_BACKEND_AZURE;
	free(c.azure_endpoint);
	c.azure_endpoint = xstrdup("http://127.0.0.1:9");
	free(c.azure_index);
	c.azure_index = xstrdup("tools");
	free(c.azure_api_key_file);
	c.azure_api_key_file = xstrdup(path);

	/* Read from the parent's copy (secret_file.h): none yet. */
	ck_assert_ptr_null(toolreg_from_config(&c, why, sizeof(why)));
	ck_assert_msg(strstr(why, "not opened by the daemon") != NULL, "%s", why);
	static const struct secret_deny nobody = {1, 0, NULL};
	chmod(path, 0600);
	ck_assert_msg(secret_file_open("azure_ai_search.api_key_file", path, &nobody, why,
				       sizeof(why)) == 0, "%s", why);
	struct toolreg *r = toolreg_from_config(&c, why, sizeof(why));
	ck_assert_msg(r != NULL, "%s", why);
	const struct azure_search *a = toolreg_backend(r);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a->api_key, "s3cr3tKEY==");
	ck_assert_str_eq(a->url, "http://127.0.0.1:9/indexes/tools/docs/search?api-version=2023-11-01");
	ck_assert_int_eq(a->timeout_s, 10);
	toolreg_free(r);

	/* A refused connection is an error naming the backend, not a crash. */
	char **names;
	double *scores;
	size_t n;
	struct azure_search s = {.url = c.azure_endpoint, .api_key = (char *)"k", .timeout_s = 2};
	ck_assert_int_eq(azure_search_run(&s, "q", NULL, 5, &names, &scores, &n, why, sizeof(why)),
			 -1);
	ck_assert_msg(strncmp(why, "azure_ai_search: ", 17) == 0, "%s", why);

	config_free(&c);
	unlink(path);
	rmdir(dir);
	free(path);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("toolreg_azure");
	TCase *tc = tcase_create("request");
	tcase_add_test(tc, url);
	tcase_add_test(tc, body);
	tcase_add_test(tc, parse);
	tcase_add_test(tc, key_file);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
