/*
 * test_session.c - the session table and its execution line: ids, the
 * max_sessions cap, references, who may use and see which session,
 * closing (at once or after the running execution), idle expiry, and
 * executions that run one at a time in the order they joined the line,
 * time out while waiting, or fail without a kernel. session.c is real;
 * pool_stubs.c stands in for the pool.
 */
#include "autoconf.h"

#include <check.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_stubs.h"
#include "session.h"

static const char *
error_type(struct json_object *result)
{
	struct json_object *err = json_object_object_get(result, "error");
	return err ? json_object_get_string(json_object_object_get(err, "type")) : NULL;
}

static const struct session_limits roomy = {100, 100};

/* A new session of `identity` under `lim`; it must be made. */
static struct session *
create_as(const char *identity, const struct session_limits *lim)
{
	char why[ERR_LEN] = "";
	struct session *s = session_create(identity, lim, why, sizeof(why));
	ck_assert_msg(s != NULL, "%s", why);
	return s;
}

static struct session *
create(void)
{
	return create_as("anonymous", &roomy);
}

START_TEST(create_and_find)
{
	pool_lock();
	struct session *a = create();
	struct session *b = create();

	ck_assert_uint_eq(strlen(a->id), HANDLE_RANDOM_LEN);
	for (int i = 0; i < HANDLE_RANDOM_LEN; i++)
		ck_assert(isxdigit((unsigned char)a->id[i]) && !isupper((unsigned char)a->id[i]));
	ck_assert_str_ne(a->id, b->id);
	ck_assert_str_eq(a->identity, "anonymous");
	ck_assert_int_eq(a->refs, 1);
	ck_assert_ptr_null(a->worker);
	ck_assert_int_eq(session_count(), 2);
	ck_assert_ptr_eq(session_get(a->id), a);
	ck_assert_int_eq(a->refs, 2);
	session_put(a);
	ck_assert_ptr_null(session_get("0123456789abcdef0123456789abcdef"));
	ck_assert_ptr_null(session_get(""));
	struct json_object *d = session_describe();
	ck_assert_uint_eq(json_object_array_length(d), 2);
	struct json_object *first = json_object_array_get_idx(d, 0);
	ck_assert_ptr_nonnull(json_object_object_get(first, "id"));
	ck_assert_int_eq(json_object_get_int(json_object_object_get(first, "worker_pid")), 0);
	json_object_put(d);
	session_put(a);
	session_put(b);
	pool_unlock();
}
END_TEST

static char closed_id[SESSION_ID_LEN + 1];

static void
record_close(const char *id)
{
	snprintf(closed_id, sizeof(closed_id), "%s", id);
}

START_TEST(max_sessions)
{
	static const struct session_limits two = {2, 2};
	char why[ERR_LEN] = "";

	pool_lock();
	struct session *a = create_as("alice", &two);
	struct session *b = create_as("alice", &two);
	/* Another identity finds the pool full of alice's: refused, and
	 * none of alice's sessions is closed for it. */
	ck_assert_ptr_null(session_create("bob", &two, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "pool.max_sessions"));
	ck_assert_int_eq(session_count(), 2);
	ck_assert(!a->closed && !b->closed);
	/* Kernels of batch items count against the cap too. */
	session_on_close(record_close);
	session_close(b);
	ck_assert_str_eq(closed_id, b->id); /* what runs for b elsewhere ends with it */
	session_on_close(NULL);
	session_put(b);
	session_hold_kernels(1);
	why[0] = '\0';
	ck_assert_ptr_null(session_create("bob", &two, why, sizeof(why)));
	ck_assert_str_ne(why, "");
	session_hold_kernels(-1);
	b = session_create("bob", &two, why, sizeof(why));
	ck_assert_ptr_nonnull(b);
	session_close(a);
	session_put(a);
	session_close(b);
	session_put(b);
	pool_unlock();
}
END_TEST

/* Whether session `id` is still in the table. */
static int
open_now(const char *id)
{
	struct session *s = session_get(id);
	if (s)
		session_put(s);
	return s != NULL;
}

/* A new session of `identity` that nobody holds, as initialize leaves it; its id into id. */
static void
create_idle(const char *identity, const struct session_limits *lim, char *id, time_t used)
{
	struct session *s = create_as(identity, lim);
	memcpy(id, s->id, SESSION_ID_LEN + 1);
	s->last_used = used;
	session_put(s);
}

/* Close session `id`, if it is open. */
static void
close_id(const char *id)
{
	struct session *s = session_get(id);
	if (s) {
		session_close(s);
		session_put(s);
	}
}

/*
 * An identity at its share gets a new session by losing its own least
 * recently used idle one, never another identity's; busy and held ones are
 * kept, and with none left it is refused, naming the key.
 */
START_TEST(identity_share)
{
	static const struct session_limits share2 = {10, 2};
	char a1[SESSION_ID_LEN + 1], a2[SESSION_ID_LEN + 1], bob[SESSION_ID_LEN + 1];
	char why[ERR_LEN] = "";
	time_t now = time(NULL);

	pool_lock();
	create_idle("alice", &share2, a1, now - 100);
	create_idle("alice", &share2, a2, now - 50);
	create_idle("bob", &share2, bob, now - 1000);
	struct session *a3 = create_as("alice", &share2);
	ck_assert(!open_now(a1));
	ck_assert(open_now(a2) && open_now(bob));
	ck_assert_str_eq(a3->reclaimed, a1);
	ck_assert_str_eq(a3->reclaimed_by, "pool.max_sessions_per_identity");
	ck_assert_int_eq(session_count(), 3);
	/* a3 is held (its call has yet to start), a2 runs a call: both kept. */
	struct session *busy = session_get(a2);
	busy->busy = 1;
	session_put(busy);
	ck_assert_ptr_null(session_create("alice", &share2, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "pool.max_sessions_per_identity"));
	ck_assert(open_now(a2) && !a3->closed);
	/* Bob still gets one at once. */
	struct session *b2 = create_as("bob", &share2);
	ck_assert_str_eq(b2->reclaimed, "");
	busy->busy = 0;
	session_close(a3);
	session_put(a3);
	session_close(b2);
	session_put(b2);
	close_id(a2);
	close_id(bob);
	ck_assert_int_eq(session_count(), 0);
	pool_unlock();
}
END_TEST

static char batch_owner[SESSION_ID_LEN + 1];

static int
has_batch(const char *id)
{
	return strcmp(id, batch_owner) == 0;
}

/* A session whose batch still runs is not idle: it is never closed to make room. */
START_TEST(batch_keeps_session)
{
	static const struct session_limits one = {10, 1};
	char a[SESSION_ID_LEN + 1], why[ERR_LEN] = "";

	pool_lock();
	create_idle("alice", &one, a, time(NULL) - 100);
	memcpy(batch_owner, a, sizeof(batch_owner));
	session_busy_elsewhere(has_batch);
	ck_assert_ptr_null(session_create("alice", &one, why, sizeof(why)));
	ck_assert(open_now(a));
	batch_owner[0] = '\0'; /* the batch ended */
	struct session *a2 = create_as("alice", &one);
	ck_assert(!open_now(a));
	session_busy_elsewhere(NULL);
	session_close(a2);
	session_put(a2);
	pool_unlock();
}
END_TEST

/* A full pool costs the new session's identity its own idle session, if it has one. */
START_TEST(pool_full_reclaims_own)
{
	static const struct session_limits full3 = {3, 3};
	char a[SESSION_ID_LEN + 1], b1[SESSION_ID_LEN + 1], b2[SESSION_ID_LEN + 1];
	time_t now = time(NULL);

	pool_lock();
	create_idle("alice", &full3, a, now);
	create_idle("bob", &full3, b1, now - 10);
	create_idle("bob", &full3, b2, now);
	struct session *a2 = create_as("alice", &full3);
	ck_assert(!open_now(a));
	ck_assert(open_now(b1) && open_now(b2));
	ck_assert_str_eq(a2->reclaimed, a);
	ck_assert_str_eq(a2->reclaimed_by, "pool.max_sessions");
	session_close(a2);
	session_put(a2);
	close_id(b1);
	close_id(b2);
	pool_unlock();
}
END_TEST

START_TEST(who_may_use_and_see)
{
	pool_lock();
	struct session *anon1 = create(), *anon2 = create();
	struct session *alice1 = create(), *alice2 = create(), *bob = create();
	snprintf(alice1->identity, sizeof(alice1->identity), "alice");
	snprintf(alice2->identity, sizeof(alice2->identity), "alice");
	snprintf(bob->identity, sizeof(bob->identity), "bob");

	/* Anonymous callers may resume a session whose id they hold... */
	ck_assert(session_may_use(anon1, anon2));
	/* ...but list only their own. */
	ck_assert(session_visible(anon1, anon1));
	ck_assert(!session_visible(anon1, anon2));
	ck_assert(session_may_use(alice1, alice2));
	ck_assert(session_visible(alice1, alice2));
	ck_assert(!session_may_use(alice1, bob));
	ck_assert(!session_visible(bob, alice1));
	ck_assert(!session_may_use(anon1, alice1));
	ck_assert(!session_may_use(alice1, anon1));

	struct session **list = session_list_visible(alice1);
	int n = 0;
	for (; list[n]; n++) {
		ck_assert_str_eq(list[n]->identity, "alice");
		ck_assert_int_eq(list[n]->refs, 2);
		session_put(list[n]);
	}
	ck_assert_int_eq(n, 2);
	free(list);
	list = session_list_visible(anon2);
	ck_assert_ptr_eq(list[0], anon2);
	ck_assert_ptr_null(list[1]);
	session_put(list[0]);
	free(list);
	session_close_all();
	ck_assert_int_eq(session_count(), 0);
	session_put(anon1);
	session_put(anon2);
	session_put(alice1);
	session_put(alice2);
	session_put(bob);
	pool_unlock();
}
END_TEST

START_TEST(close_releases_worker)
{
	struct call c;

	pool_lock();
	struct session *s = create();
	char id[SESSION_ID_LEN + 1];
	memcpy(id, s->id, sizeof(id));
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	ck_assert(c.done);
	ck_assert(json_object_get_boolean(json_object_object_get(c.result, "success")));
	ck_assert_ptr_nonnull(s->worker);
	ck_assert_int_eq(pool_stub.takes, 1);
	call_clear(&c);
	/* The second execution keeps the same kernel. */
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	ck_assert_int_eq(pool_stub.takes, 1);
	call_clear(&c);

	session_close(s);
	ck_assert(s->closed);
	ck_assert_int_eq(session_count(), 0);
	ck_assert_ptr_null(session_get(id));
	session_close(s); /* twice is harmless */
	/* The worker goes back only when the last reference does. */
	ck_assert_int_eq(pool_stub.releases, 0);
	session_put(s);
	ck_assert_int_eq(pool_stub.releases, 1);
	pool_unlock();
}
END_TEST

/* A session whose worker died keeps its directory: the next call gets a new
 * worker there (a revival), and the directory goes when the session does. */
START_TEST(dead_worker_revived)
{
	struct call c;

	pool_lock();
	struct session *s = create();
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	call_clear(&c);
	struct worker *dead = s->worker;
	dead->dir_id = 42;
	dead->workdir = NULL;
	dead->state = WORKER_DEAD;
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	ck_assert(json_object_get_boolean(json_object_object_get(c.result, "success")));
	ck_assert_int_eq(pool_stub.revivals, 1);
	ck_assert_uint_eq(pool_stub.revived_dir, 42);
	ck_assert_int_eq(pool_stub.takes, 2);
	ck_assert_ptr_nonnull(s->worker);
	ck_assert_ptr_ne(s->worker, dead);
	ck_assert_int_eq(dead->keep_dir, 1); /* let go without removing its directory */
	ck_assert_int_eq(s->kept_dir, 0);    /* the new worker holds it now */
	/* the agent is told its variables are gone */
	ck_assert(json_object_get_boolean(json_object_object_get(c.result, "kernel_restarted")));
	ck_assert_ptr_nonnull(strstr(json_object_get_string(json_object_object_get(c.result,
										     "stderr")),
				     "worker died"));
	call_clear(&c);
	int removed = pool_stub.removed_dirs;
	session_close(s);
	ck_assert_int_eq(pool_stub.removed_dirs, removed); /* its worker's, with it */
	pool_unlock();
}
END_TEST

START_TEST(no_kernel)
{
	struct call c;

	pool_lock();
	struct session *s = create();
	pool_stub.no_worker = 1;
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	ck_assert(c.done);
	ck_assert_str_eq(error_type(c.result), "NoKernel");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(
		json_object_object_get(json_object_object_get(c.result, "error"), "message")),
		"no kernel could start"));
	ck_assert(!s->busy);
	call_clear(&c);
	/* The session stays usable: the next call gets a kernel once one exists. */
	pool_stub.no_worker = 0;
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	ck_assert_ptr_null(error_type(c.result));
	call_clear(&c);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(closed_and_cancelled_never_run)
{
	struct call c;

	pool_lock();
	struct session *s = create();
	call_init(&c);
	c.cancelled = 1;
	session_execute(s, &c, "ok", 5, 0);
	ck_assert_str_eq(error_type(c.result), "Cancelled");
	ck_assert_ptr_null(s->line_head);
	call_clear(&c);
	session_close(s);
	call_init(&c);
	session_execute(s, &c, "ok", 5, 0);
	ck_assert_str_eq(error_type(c.result), "SessionClosed");
	call_clear(&c);
	ck_assert_str_eq(pool_stub.order, "");
	session_put(s);
	pool_unlock();
}
END_TEST

struct runner {
	struct session *s;
	struct call c;
	const char *code;
	double timeout_s;
};

static void *
run(void *arg)
{
	struct runner *r = arg;

	pool_lock();
	session_execute(r->s, &r->c, r->code, r->timeout_s, 0);
	pool_unlock();
	return NULL;
}

/* Start `r` on a thread of its own; it joined the line before this returns. */
static pthread_t
start(struct runner *r, struct session *s, const char *code, double timeout_s)
{
	pthread_t t;

	r->s = s;
	r->code = code;
	r->timeout_s = timeout_s;
	call_init(&r->c);
	session_enqueue(s, &r->c);
	ck_assert_int_eq(pthread_create(&t, NULL, run, r), 0);
	return t;
}

START_TEST(one_at_a_time_in_order)
{
	struct runner r[4];
	pthread_t t[4];

	pool_lock();
	struct session *s = create();
	t[0] = start(&r[0], s, "block", 30);
	t[1] = start(&r[1], s, "second", 30);
	t[2] = start(&r[2], s, "third", 30);
	t[3] = start(&r[3], s, "fourth", 30);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	ck_assert(s->busy);
	ck_assert(session_any_busy());
	ck_assert_str_eq(pool_stub.order, "block");
	/* Expiry never closes a session while it runs code. */
	s->last_used = 0;
	session_expire(1, 1);
	ck_assert(!s->closed);
	stub_unblock();
	pool_unlock();
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pool_lock();
	ck_assert_str_eq(pool_stub.order, "block;second;third;fourth");
	for (int i = 0; i < 4; i++) {
		ck_assert(r[i].c.done);
		ck_assert_ptr_null(error_type(r[i].c.result));
		call_clear(&r[i].c);
	}
	ck_assert(!session_any_busy());
	ck_assert_ptr_null(s->line_head);
	ck_assert_ptr_null(s->line_tail);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(waiting_counts_against_timeout)
{
	struct runner r[2];
	pthread_t t[2];

	pool_lock();
	struct session *s = create();
	t[0] = start(&r[0], s, "block", 30);
	t[1] = start(&r[1], s, "late", 1);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	pool_unlock();
	pthread_join(t[1], NULL); /* gives up after its 1 s timeout */
	pool_lock();
	ck_assert_str_eq(error_type(r[1].c.result), "TimeoutError");
	ck_assert_str_eq(pool_stub.order, "block");
	/* Closing the session interrupts what runs. */
	session_close(s);
	ck_assert_int_eq(pool_stub.interrupts, 1);
	pool_unlock();
	pthread_join(t[0], NULL);
	pool_lock();
	ck_assert_str_eq(error_type(r[0].c.result), "KeyboardInterrupt");
	call_clear(&r[0].c);
	call_clear(&r[1].c);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(closing_wakes_the_line)
{
	struct runner r[2];
	pthread_t t[2];

	pool_lock();
	struct session *s = create();
	t[0] = start(&r[0], s, "block", 30);
	t[1] = start(&r[1], s, "never", 30);
	ck_assert_int_eq(stub_wait_blocked(1), 0);
	session_close(s);
	pool_unlock();
	pthread_join(t[1], NULL);
	pthread_join(t[0], NULL);
	pool_lock();
	ck_assert_str_eq(error_type(r[1].c.result), "SessionClosed");
	ck_assert_str_eq(pool_stub.order, "block");
	call_clear(&r[0].c);
	call_clear(&r[1].c);
	session_put(s);
	pool_unlock();
}
END_TEST

START_TEST(idle_expiry)
{
	pool_lock();
	struct session *old = create(), *fresh = create();
	old->last_used = time(NULL) - 100;
	session_expire(0, 0); /* 0: never */
	ck_assert(!old->closed);
	session_expire(50, 0);
	ck_assert(old->closed);
	ck_assert(!fresh->closed);
	ck_assert_int_eq(session_count(), 1);
	session_put(old);
	session_put(fresh);
	pool_unlock();
}
END_TEST

/*
 * An execution session no call named again after its first goes after
 * session_idle_timeout_unused; one named again, and an MCP session, wait
 * for session_idle_timeout.
 */
START_TEST(unused_expiry)
{
	pool_lock();
	struct session *once = create(), *again = create(), *mcp = create();
	once->stateless = again->stateless = 1;
	again->named = 1;
	once->last_used = again->last_used = mcp->last_used = time(NULL) - 100;
	session_expire(1800, 0); /* 0: session_idle_timeout alone */
	ck_assert(!once->closed);
	session_expire(1800, 60);
	ck_assert(once->closed);
	ck_assert(!again->closed && !mcp->closed);
	session_expire(0, 60); /* idle 0 keeps the rest forever */
	ck_assert(!again->closed && !mcp->closed);
	session_close(again);
	session_close(mcp);
	session_put(once);
	session_put(again);
	session_put(mcp);
	pool_unlock();
}
END_TEST

static void
reset(void)
{
	memset(&pool_stub, 0, sizeof(pool_stub));
}

static Suite *
session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, reset, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, create_and_find);
	tcase_add_test(tc, max_sessions);
	tcase_add_test(tc, identity_share);
	tcase_add_test(tc, pool_full_reclaims_own);
	tcase_add_test(tc, batch_keeps_session);
	tcase_add_test(tc, who_may_use_and_see);
	tcase_add_test(tc, close_releases_worker);
	tcase_add_test(tc, dead_worker_revived);
	tcase_add_test(tc, no_kernel);
	tcase_add_test(tc, closed_and_cancelled_never_run);
	tcase_add_test(tc, one_at_a_time_in_order);
	tcase_add_test(tc, waiting_counts_against_timeout);
	tcase_add_test(tc, closing_wakes_the_line);
	tcase_add_test(tc, idle_expiry);
	tcase_add_test(tc, unused_expiry);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(session_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
