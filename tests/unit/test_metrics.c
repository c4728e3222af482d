/* test_metrics.c - the counters and their Prometheus text (metrics.c). */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "metrics.h"

static const struct metrics_gauges gauges = {.sessions = 3, .busy = 1, .idle = 2,
					     .starting = 1, .queued = 4, .warm = 2,
					     .max_sessions = 100};

/* Nonzero if the rendered text holds `line` as a whole line. */
static int
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

static void
assert_line(const char *text, const char *line)
{
	if (!has_line(text, line))
		ck_abort_msg("no line \"%s\" in:\n%s", line, text);
}

static struct json_object *
parse(const char *json)
{
	struct json_object *o = json_tokener_parse(json);
	ck_assert_ptr_nonnull(o);
	return o;
}

START_TEST(gauges_and_types)
{
	struct metrics_gauges g = gauges;
	char *t = metrics_render(&g);

	assert_line(t, "# TYPE codeexecd_sessions gauge");
	assert_line(t, "codeexecd_sessions{state=\"idle\"} 2");
	assert_line(t, "codeexecd_sessions{state=\"busy\"} 1");
	assert_line(t, "codeexecd_pool_kernels{state=\"starting\"} 1");
	assert_line(t, "codeexecd_pool_max_sessions 100");
	assert_line(t, "# TYPE codeexecd_pool_queue_length gauge");
	assert_line(t, "codeexecd_pool_queue_length 4");
	assert_line(t, "# TYPE codeexecd_call_seconds histogram");
	assert_line(t, "# TYPE codeexecd_timeouts_total counter");
	free(t);
	/* A closed session's call still ending: busy never exceeds open. */
	g.busy = 5;
	t = metrics_render(&g);
	assert_line(t, "codeexecd_sessions{state=\"idle\"} 0");
	assert_line(t, "codeexecd_sessions{state=\"busy\"} 3");
	free(t);
}
END_TEST

START_TEST(histogram_is_cumulative)
{
	metrics_observe(METRICS_TOTAL, 0.0005);
	metrics_observe(METRICS_TOTAL, 0.003);
	metrics_observe(METRICS_TOTAL, 2);
	metrics_observe(METRICS_TOTAL, -1); /* a clock step: counted as 0 */
	metrics_observe(METRICS_KERNEL, 1000);
	char *t = metrics_render(&gauges);
	assert_line(t, "codeexecd_call_seconds_bucket{le=\"0.001\"} 2");
	assert_line(t, "codeexecd_call_seconds_bucket{le=\"0.0025\"} 2");
	assert_line(t, "codeexecd_call_seconds_bucket{le=\"0.005\"} 3");
	assert_line(t, "codeexecd_call_seconds_bucket{le=\"1\"} 3");
	assert_line(t, "codeexecd_call_seconds_bucket{le=\"2.5\"} 4");
	assert_line(t, "codeexecd_call_seconds_bucket{le=\"+Inf\"} 4");
	assert_line(t, "codeexecd_call_seconds_count 4");
	assert_line(t, "codeexecd_call_seconds_sum 2.003500000");
	assert_line(t, "codeexecd_call_kernel_seconds_bucket{le=\"300\"} 0");
	assert_line(t, "codeexecd_call_kernel_seconds_bucket{le=\"+Inf\"} 1");
	assert_line(t, "codeexecd_call_queued_seconds_count 0");
	free(t);
}
END_TEST

START_TEST(calls_by_tool)
{
	metrics_tool_name(0, "execute_py_code");
	metrics_tool_name(1, "py_check_job");
	metrics_call(0, METRICS_OK);
	metrics_call(0, METRICS_OK);
	metrics_call(1, METRICS_REJECTED);
	metrics_call(-1, METRICS_REJECTED);
	metrics_call(7, METRICS_ERROR); /* a number without a name */
	char *t = metrics_render(&gauges);
	assert_line(t, "codeexecd_calls_total{tool=\"execute_py_code\",outcome=\"ok\"} 2");
	assert_line(t, "codeexecd_calls_total{tool=\"execute_py_code\",outcome=\"timeout\"} 0");
	assert_line(t, "codeexecd_calls_total{tool=\"py_check_job\",outcome=\"rejected\"} 1");
	assert_line(t, "codeexecd_calls_total{tool=\"unknown\",outcome=\"rejected\"} 1");
	assert_line(t, "codeexecd_calls_total{tool=\"unknown\",outcome=\"error\"} 1");
	ck_assert(!has_line(t, "codeexecd_calls_total{tool=\"unknown\",outcome=\"ok\"} 0"));
	free(t);
}
END_TEST

START_TEST(outcome_of_an_answer)
{
	static const struct {
		const char *json;
		enum metrics_outcome want;
	} cases[] = {
		{"{\"structuredContent\":{\"success\":true},\"isError\":false}", METRICS_OK},
		{"{\"structuredContent\":{\"error\":{\"type\":\"NameError\"}},\"isError\":true}",
		 METRICS_ERROR},
		{"{\"structuredContent\":{\"error\":{\"type\":\"TimeoutError\"}},\"isError\":true}",
		 METRICS_TIMEOUT},
		{"{\"structuredContent\":{\"error\":{\"type\":\"Cancelled\"}},\"isError\":true}",
		 METRICS_CANCELLED},
		{"{\"structuredContent\":{\"job_id\":\"j\",\"poll_tool\":\"p\"},\"isError\":false}",
		 METRICS_BACKGROUND},
		{"{\"content\":[],\"isError\":true}", METRICS_ERROR},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *r = parse(cases[i].json);
		ck_assert_msg(metrics_outcome_of(r) == cases[i].want, "case %zu: %s", i,
			      cases[i].json);
		json_object_put(r);
	}
}
END_TEST

START_TEST(results_and_deaths)
{
	struct json_object *r = parse(
		"{\"stdout\":\"12345\",\"stderr\":\"ab\",\"rich_outputs\":[{\"mime_type\":"
		"\"image/png\",\"data\":\"AAAA\"}],\"error\":{\"type\":\"MemoryLimitExceeded\","
		"\"message\":\"m\"}}");
	metrics_result(r);
	json_object_put(r);
	r = parse("{\"error\":{\"type\":\"KernelDied\",\"message\":\"kernel died: restarted on "
		  "request\"}}");
	metrics_result(r);
	json_object_put(r);
	r = parse("{\"error\":{\"type\":\"KernelDied\",\"message\":\"killed by signal 9\"}}");
	metrics_result(r);
	json_object_put(r);
	metrics_kernel_death(METRICS_DEATH_OOM); /* one that died idle */
	metrics_worker_death(1, 1);
	metrics_worker_death(0, 0);
	metrics_add(METRICS_SPILL_FILES, 2);
	char *t = metrics_render(&gauges);
	assert_line(t, "codeexecd_output_bytes_total{stream=\"stdout\"} 5");
	assert_line(t, "codeexecd_output_bytes_total{stream=\"stderr\"} 2");
	assert_line(t, "codeexecd_output_bytes_total{stream=\"rich\"} 4");
	assert_line(t, "codeexecd_kernel_deaths_total{cause=\"oom\"} 2");
	assert_line(t, "codeexecd_kernel_deaths_total{cause=\"restart\"} 1");
	assert_line(t, "codeexecd_kernel_deaths_total{cause=\"crash\"} 1");
	assert_line(t, "codeexecd_oom_kills_total 2");
	assert_line(t, "codeexecd_worker_deaths_total{cause=\"killed\"} 1");
	assert_line(t, "codeexecd_worker_deaths_total{cause=\"exit\"} 1");
	assert_line(t, "codeexecd_worker_deaths_total{cause=\"signal\"} 0");
	assert_line(t, "codeexecd_spill_files_total 2");
	free(t);
}
END_TEST

START_TEST(http_status_codes)
{
	metrics_http_status(200);
	metrics_http_status(200);
	metrics_http_status(404);
	metrics_http_status(99);
	metrics_http_status(600);
	char *t = metrics_render(&gauges);
	assert_line(t, "codeexecd_http_responses_total{code=\"200\"} 2");
	assert_line(t, "codeexecd_http_responses_total{code=\"404\"} 1");
	assert_line(t, "codeexecd_http_responses_total{code=\"other\"} 2");
	ck_assert(strstr(t, "code=\"500\"") == NULL); /* codes never sent stay out */
	free(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("render");
	/* Each test forks (Check's default), so each starts from zero counters. */
	tcase_add_test(tc, gauges_and_types);
	tcase_add_test(tc, histogram_is_cumulative);
	tcase_add_test(tc, calls_by_tool);
	tcase_add_test(tc, outcome_of_an_answer);
	tcase_add_test(tc, results_and_deaths);
	tcase_add_test(tc, http_status_codes);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
