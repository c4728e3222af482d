/*
 * test_job.c - jobs and their queue: a job runs on its own thread in the
 * order it was started, ends completed, failed, timed out or cancelled
 * (queued or running), is visible only to its owner, is found by the
 * request that started it while it runs, and is dropped by job_expire once
 * nobody holds it (at once, or after the retention when handed out).
 * job.c and session.c are real; pool_stubs.c stands in for the pool.
 */
#include "autoconf.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "pool_stubs.h"

#define OWNER "0123456789abcdef0123456789abcdef"
#define STRANGER "fedcba9876543210fedcba9876543210"

static struct session *
create(void)
{
	char why[ERR_LEN] = "";
	struct session *s = session_create("anonymous", &(struct session_limits){100, 100}, why,
					   sizeof(why));
	ck_assert_msg(s != NULL, "%s", why);
	return s;
}

/* Wait for `j` to end, at most 10 s; lock held. */
static void
wait_end(struct job *j)
{
	ck_assert_msg(job_wait(j, 10, 0), "job %s did not end", j->id);
}

START_TEST(status_names)
{
	ck_assert_str_eq(job_status_name(JOB_RUNNING), "running");
	ck_assert_str_eq(job_status_name(JOB_COMPLETED), "completed");
	ck_assert_str_eq(job_status_name(JOB_FAILED), "failed");
	ck_assert_str_eq(job_status_name(JOB_CANCELLED), "cancelled");
	ck_assert_str_eq(job_status_name(JOB_TIMED_OUT), "timed_out");
}
END_TEST

START_TEST(how_jobs_end)
{
	static const struct {
		const char *code;
		enum job_status status;
	} cases[] = {
		{"ok", JOB_COMPLETED},
		{"fail", JOB_FAILED},
		{"timeout", JOB_TIMED_OUT},
	};

	pool_lock();
	struct session *s = create();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job *j = job_start(s, OWNER, cases[i].code, 5, 0, NULL);
		ck_assert_uint_eq(strlen(j->id), HANDLE_RANDOM_LEN);
		ck_assert_str_eq(j->session_id, s->id);
		wait_end(j);
		ck_assert_msg(j->status == cases[i].status, "%s ended %s", cases[i].code,
			      job_status_name(j->status));
		ck_assert(j->call.done);
		ck_assert_ptr_nonnull(j->call.result);
		ck_assert_ptr_null(j->session); /* its reference went with its thread */
		double e = job_elapsed(j);
		ck_assert(e >= 0);
		ck_assert(job_elapsed(j) == e); /* frozen once it ended */
		job_unref(j);
	}
	ck_assert_str_eq(pool_stub.order, "ok;fail;timeout");
	ck_assert_int_eq(s->refs, 1);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(queue_keeps_start_order)
{
	static const char *const codes[] = {"block", "b", "c", "d", "e"};
	struct job *j[5];

	pool_lock();
	struct session *s = create();
	for (int i = 0; i < 5; i++)
		j[i] = job_start(s, OWNER, codes[i], 30, 0, NULL);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(j[i]->status, JOB_RUNNING);
	/* A wait that times out says the job is still running. */
	ck_assert(!job_wait(j[1], 0.05, 0));
	stub_unblock();
	for (int i = 0; i < 5; i++) {
		wait_end(j[i]);
		ck_assert_int_eq(j[i]->status, JOB_COMPLETED);
		job_unref(j[i]);
	}
	ck_assert_str_eq(pool_stub.order, "block;b;c;d;e");
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(owner_only)
{
	pool_lock();
	struct session *s = create();
	struct job *j = job_start(s, OWNER, "ok", 5, 0, NULL);
	wait_end(j);
	struct job *again = job_get(j->id, OWNER);
	ck_assert_ptr_eq(again, j);
	job_unref(again);
	ck_assert_ptr_null(job_get(j->id, STRANGER));
	ck_assert_ptr_null(job_get("ffffffffffffffffffffffffffffffff", OWNER));
	job_unref(j);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(found_by_request)
{
	struct json_object *rid = json_object_new_int(42);
	struct json_object *same = json_object_new_int(42);
	struct json_object *other = json_object_new_string("42");

	pool_lock();
	struct session *s = create();
	struct job *j = job_start(s, OWNER, "block", 30, 0, rid);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	struct job *f = job_find_request(OWNER, same);
	ck_assert_ptr_eq(f, j);
	job_unref(f);
	ck_assert_ptr_null(job_find_request(OWNER, other)); /* "42" is not 42 */
	ck_assert_ptr_null(job_find_request(STRANGER, same));
	stub_unblock();
	wait_end(j);
	/* Only running jobs are found: a late cancel finds nothing. */
	ck_assert_ptr_null(job_find_request(OWNER, same));
	job_unref(j);
	session_put(s);
	pool_unlock();
	json_object_put(rid);
	json_object_put(same);
	json_object_put(other);
}
END_TEST

START_TEST(cancel_running)
{
	pool_lock();
	struct session *s = create();
	struct job *j = job_start(s, OWNER, "block", 30, 0, NULL);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	job_cancel(j);
	ck_assert_int_eq(pool_stub.interrupts, 1);
	job_cancel(j); /* once is enough */
	ck_assert_int_eq(pool_stub.interrupts, 1);
	wait_end(j);
	ck_assert_int_eq(j->status, JOB_CANCELLED);
	job_cancel(j); /* a finished job stays as it ended */
	ck_assert_int_eq(j->status, JOB_CANCELLED);
	job_unref(j);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(cancel_queued)
{
	pool_lock();
	struct session *s = create();
	struct job *first = job_start(s, OWNER, "block", 30, 0, NULL);
	struct job *queued = job_start(s, OWNER, "never", 30, 0, NULL);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	job_cancel(queued);
	/* It leaves the line without interrupting the job that runs. */
	wait_end(queued);
	ck_assert_int_eq(queued->status, JOB_CANCELLED);
	ck_assert_int_eq(pool_stub.interrupts, 0);
	ck_assert_int_eq(first->status, JOB_RUNNING);
	stub_unblock();
	wait_end(first);
	ck_assert_int_eq(first->status, JOB_COMPLETED);
	ck_assert_str_eq(pool_stub.order, "block");
	struct json_object *err = json_object_object_get(queued->call.result, "error");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(err, "type")), "Cancelled");
	job_unref(first);
	job_unref(queued);
	session_put(s);
	pool_unlock();
}
END_TEST

/* Another thread's new output for job `arg`, as the main loop would add it. */
static void *
add_output(void *arg)
{
	struct job *j = arg;

	pool_lock();
	j->call.changes++;
	pthread_cond_broadcast(&j->call.cond);
	pool_unlock();
	return NULL;
}

START_TEST(wait_on_change)
{
	pthread_t t;

	pool_lock();
	struct session *s = create();
	struct job *j = job_start(s, OWNER, "block", 30, 0, NULL);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	unsigned long before = j->call.changes;
	/* New output wakes a waiter that asked for changes, before the end. */
	ck_assert_int_eq(pthread_create(&t, NULL, add_output, j), 0);
	ck_assert(!job_wait(j, 10, 1));
	ck_assert_uint_eq(j->call.changes, before + 1);
	ck_assert_int_eq(j->status, JOB_RUNNING);
	pool_unlock();
	pthread_join(t, NULL);
	pool_lock();
	stub_unblock();
	wait_end(j);
	job_unref(j);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(expiry)
{
	pool_lock();
	struct session *s = create();
	struct job *quick = job_start(s, OWNER, "ok", 5, 0, NULL);
	struct job *kept = job_start(s, OWNER, "ok", 5, 0, NULL);
	struct job *held = job_start(s, OWNER, "ok", 5, 0, NULL);
	char quick_id[SESSION_ID_LEN + 1], kept_id[SESSION_ID_LEN + 1];
	snprintf(quick_id, sizeof(quick_id), "%s", quick->id);
	snprintf(kept_id, sizeof(kept_id), "%s", kept->id);
	wait_end(quick);
	wait_end(kept);
	wait_end(held);
	kept->kept = 1;
	job_unref(quick);
	job_unref(kept);
	pool_unlock();

	/* Unreferenced and never handed out: dropped at once; held ones stay. */
	job_expire(3600);
	pool_lock();
	ck_assert_ptr_null(job_get(quick_id, OWNER));
	struct job *k = job_get(kept_id, OWNER);
	ck_assert_ptr_nonnull(k);
	job_unref(k);
	struct job *h = job_get(held->id, OWNER);
	ck_assert_ptr_eq(h, held);
	job_unref(h);
	pool_unlock();
	/* A kept job goes once its retention has passed. */
	job_expire(0);
	pool_lock();
	ck_assert_ptr_null(job_get(kept_id, OWNER));
	ck_assert_ptr_eq(job_get(held->id, OWNER), held);
	job_unref(held);
	job_unref(held);
	pool_unlock();
	job_expire(0);
	pool_lock();
	session_put(s);
	pool_unlock();
}
END_TEST

static void
reset(void)
{
	memset(&pool_stub, 0, sizeof(pool_stub));
}

static Suite *
job_suite(void)
{
	Suite *s = suite_create("job");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, reset, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, status_names);
	tcase_add_test(tc, how_jobs_end);
	tcase_add_test(tc, queue_keeps_start_order);
	tcase_add_test(tc, owner_only);
	tcase_add_test(tc, found_by_request);
	tcase_add_test(tc, cancel_running);
	tcase_add_test(tc, cancel_queued);
	tcase_add_test(tc, wait_on_change);
	tcase_add_test(tc, expiry);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(job_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
