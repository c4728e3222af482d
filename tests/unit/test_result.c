/* test_result.c - how an execution result reaches an MCP client. */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "result.h"

/* A result as the worker sends it, from JSON text. */
static struct json_object *
parse(const char *json)
{
	struct json_object *o = json_tokener_parse(json);
	ck_assert_ptr_nonnull(o);
	return o;
}

static const char *
text_of(struct json_object *tool)
{
	struct json_object *content = json_object_object_get(tool, "content");
	return json_object_get_string(
		json_object_object_get(json_object_array_get_idx(content, 0), "text"));
}

START_TEST(output_and_value)
{
	struct json_object *t = result_to_tool(
		parse("{\"success\":true,\"stdout\":\"hi\\n\",\"stderr\":\"warn\\n\","
		      "\"rich_outputs\":[{\"mime_type\":\"text/plain\",\"data\":\"42\"}],"
		      "\"error\":null,\"execution_time\":0.1}"),
		"abc");
	ck_assert_str_eq(text_of(t), "hi\n[stderr]\nwarn\n42");
	ck_assert(!json_object_get_boolean(json_object_object_get(t, "isError")));
	struct json_object *sc = json_object_object_get(t, "structuredContent");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(sc, "session_id")), "abc");
	json_object_put(t);
}
END_TEST

/* The types allow_mime dropped are named in the text, after the values. */
START_TEST(dropped_types_in_text)
{
	struct json_object *t = result_to_tool(
		parse("{\"success\":true,\"stdout\":\"\",\"stderr\":\"\",\"rich_outputs\":["
		      "{\"mime_type\":\"text/plain\",\"data\":\"<Figure>\"}],"
		      "\"error\":null,\"execution_time\":0,"
		      "\"dropped_mime\":[\"image/png\",\"text/html\"]}"),
		"s");
	ck_assert_str_eq(text_of(t), "<Figure>\n[codeexecd] rich output types not kept "
				     "(allow_mime): image/png, text/html");
	struct json_object *sc = json_object_object_get(t, "structuredContent");
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(sc, "dropped_mime")), 2);
	json_object_put(t);
}
END_TEST

START_TEST(images_become_items)
{
	struct json_object *t = result_to_tool(
		parse("{\"success\":true,\"stdout\":\"\",\"stderr\":\"\",\"rich_outputs\":["
		      "{\"mime_type\":\"text/plain\",\"data\":\"<Figure>\"},"
		      "{\"mime_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"},"
		      "{\"mime_type\":\"image/svg+xml\",\"data\":\"<svg/>\"},"
		      "{\"mime_type\":\"image/jpeg\",\"data\":\"/9j/\"}],"
		      "\"error\":null,\"execution_time\":0}"),
		"s");
	struct json_object *content = json_object_object_get(t, "content");
	ck_assert_uint_eq(json_object_array_length(content), 3);
	struct json_object *png = json_object_array_get_idx(content, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(png, "type")), "image");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(png, "mimeType")),
			 "image/png");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(png, "data")),
			 "iVBORw0KGgo=");
	json_object_put(t);
}
END_TEST

START_TEST(error_without_its_name_in_traceback)
{
	struct json_object *t = result_to_tool(
		parse("{\"success\":false,\"stdout\":\"\",\"stderr\":\"\",\"rich_outputs\":[],"
		      "\"error\":{\"type\":\"TimeoutError\",\"message\":\"Execution exceeded 1 "
		      "seconds\",\"traceback\":\"KeyboardInterrupt: \"},\"execution_time\":1}"),
		"s");
	ck_assert_str_eq(text_of(t),
			 "KeyboardInterrupt: \nTimeoutError: Execution exceeded 1 seconds");
	ck_assert(json_object_get_boolean(json_object_object_get(t, "isError")));
	json_object_put(t);
}
END_TEST

START_TEST(failed_result_shape)
{
	struct json_object *r = result_failed("NoKernel", "none ready");
	struct json_object *e = json_object_object_get(r, "error");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "type")), "NoKernel");
	ck_assert(!json_object_get_boolean(json_object_object_get(r, "success")));
	struct json_object *t = result_to_tool(r, "s");
	ck_assert_str_eq(text_of(t), "NoKernel: none ready");
	json_object_put(t);
}
END_TEST

START_TEST(empty_output_says_so)
{
	struct json_object *t = result_to_tool(
		parse("{\"success\":true,\"stdout\":\"\",\"stderr\":\"\",\"rich_outputs\":[],"
		      "\"error\":null,\"execution_time\":0}"),
		"s");
	ck_assert_str_eq(text_of(t), "(no output)");
	json_object_put(t);
}
END_TEST

START_TEST(schema_requires_result_or_job)
{
	struct json_object *sync = result_output_schema(0);
	struct json_object *job = result_output_schema(1);
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(sync, "required")), 7);
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(job, "required")), 1);
	ck_assert(json_object_object_get_ex(json_object_object_get(job, "properties"), "job_id",
					    NULL));
	json_object_put(sync);
	json_object_put(job);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("render");
	tcase_add_test(tc, output_and_value);
	tcase_add_test(tc, images_become_items);
	tcase_add_test(tc, dropped_types_in_text);
	tcase_add_test(tc, error_without_its_name_in_traceback);
	tcase_add_test(tc, failed_result_shape);
	tcase_add_test(tc, empty_output_says_so);
	tcase_add_test(tc, schema_requires_result_or_job);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
