/*
 * test_pool.c - the pool's state changes with real worker processes: the
 * warm pool fills, a ready worker is taken and replaced, it executes, it is
 * released and reaped; a worker that dies fails its call and is replaced; a
 * worker that breaks the protocol is killed, and refills back off after
 * early deaths; pool_stop ends them all; callers waiting for a kernel are
 * served first come, first served.
 *
 * Every part of the pool (pool.c and the pool_*.c below it) is real, and
 * so is the privileged parent (parent.c, in a child process) that starts
 * the workers; they are system/fake-worker (run through a one-line script that
 * gives it its mode), which speaks the real IPC codec on fd 3 and starts a
 * child of its own as its "kernel". The test's thread is the main loop.
 */
#include "autoconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fs_tree.h"
#include "parent.h"
#include "parent_link.h"
#include "pool.h"
#include "pool_state.h"
#include "xmalloc.h"

/* How long a state may take to come; far above what it needs. */
#define DEADLINE_S 20

static struct config cfg;
static char fake_worker[4096];
static char tmpdir[] = "/tmp/test_pool.XXXXXX";

/* Write the script that runs fake-worker in `mode`; returns its path. */
static char *
worker_script(const char *dir, const char *mode)
{
	char *path = xasprintf("%s/worker-%s", dir, mode);
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "create %s: %s", path, strerror(errno));
	fprintf(f, "#!/bin/sh\nexec '%s' %s \"$@\"\n", fake_worker, mode);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
	return path;
}

static pid_t parent_pid;

/* The privileged parent, in a child of ours: it starts the workers we ask for. */
static void
start_parent(const char *worker)
{
	static struct parent_args pa;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pa = (struct parent_args){.cfg = &cfg, .launcher = {&cfg, NULL, worker, 0}};
	parent_pid = fork();
	ck_assert_int_ne(parent_pid, -1);
	if (parent_pid == 0) {
		close(sv[1]);
		parent_serve(&pa, sv[0]);
		_exit(0);
	}
	close(sv[0]);
	parent_link_init(sv[1]);
}

/* A configuration in a fresh directory, and the pool on workers of `mode`. */
static void
start_pool(const char *mode, int warm)
{
	char *dir = mkdtemp(tmpdir);

	ck_assert_msg(dir != NULL, "mkdtemp: %s", strerror(errno));
	config_defaults(&cfg);
	free(cfg.state_dir);
	free(cfg.runtime_dir);
	cfg.state_dir = xasprintf("%s/state", dir);
	cfg.runtime_dir = xasprintf("%s/run", dir);
	char *sessions = xasprintf("%s/sessions", cfg.state_dir);
	ck_assert_int_eq(mkdir(cfg.state_dir, 0700), 0);
	ck_assert_int_eq(mkdir(sessions, 0700), 0);
	ck_assert_int_eq(mkdir(cfg.runtime_dir, 0700), 0);
	free(sessions);
	cfg.pool_warm = warm;
	cfg.pool_max_sessions = 4;
	start_parent(worker_script(dir, mode));
	pool_init(&cfg);
	pool_start();
}

/* One turn of the main loop, in the order main.c's loop_once takes it. */
static void
turn(void)
{
	struct pollfd pfd[32];

	pfd[0] = (struct pollfd){.fd = pool_wake_fd(), .events = POLLIN};
	pool_lock();
	int n = pool_pollfds(pfd + 1, 31);
	pool_unlock();
	ck_assert(poll(pfd, (nfds_t)n + 1, 50) != -1 || errno == EINTR);
	pool_lock();
	pool_handle(pfd + 1, n);
	pool_reap();
	pool_tick();
	pool_unlock();
	pool_refill();
}

/* Turn the loop until cond() holds (asked with the lock held); 1 if it did. */
static int
turn_until(int (*cond)(void))
{
	double end = clock_mono() + DEADLINE_S;

	for (;;) {
		pool_lock();
		int ok = cond();
		pool_unlock();
		if (ok)
			return 1;
		if (clock_mono() > end)
			return 0;
		turn();
	}
}

/* How many workers pool_describe lists in state `state`. Lock held. */
static int
count_state(const char *state)
{
	struct json_object *list = pool_describe();
	int n = 0;

	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *w = json_object_array_get_idx(list, i);
		n += strcmp(json_object_get_string(json_object_object_get(w, "state")), state) == 0;
	}
	json_object_put(list);
	return n;
}

/* Whether worker `pid` is still listed. Lock held. */
static int
listed(pid_t pid)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->pid == pid)
			return 1;
	return 0;
}

static int
one_idle(void)
{
	return pool_idle_count() == 1;
}

static int
two_idle(void)
{
	return pool_idle_count() == 2 && count_state("idle") == 2;
}

static int
three_early_deaths(void)
{
	return pool.early_deaths >= 3;
}

static int
none_live(void)
{
	return pool_live_count() == 0;
}

/* The worker the tests take, for conditions that look at it. */
static struct worker *taken;

static int
taken_dead(void)
{
	return taken->state == WORKER_DEAD;
}

static pid_t released_pid;

static int
released_gone(void)
{
	return !listed(released_pid);
}

/* Take a ready worker at once (lock held); fails the test when none is. */
static struct worker *
take(void)
{
	char why[256] = "";
	struct worker *w = pool_take(0, why, sizeof(why));

	ck_assert_msg(w != NULL, "no worker: %s", why);
	return w;
}

static const char *
error_type(struct json_object *result)
{
	struct json_object *e = json_object_object_get(result, "error");
	return e ? json_object_get_string(json_object_object_get(e, "type")) : "";
}

static const char *
error_message(struct json_object *result)
{
	struct json_object *e = json_object_object_get(result, "error");
	return e ? json_object_get_string(json_object_object_get(e, "message")) : "";
}

START_TEST(warm_pool_fills)
{
	start_pool("child", 2);
	ck_assert_int_eq(pool_ready(), 0);
	ck_assert_msg(turn_until(two_idle), "the warm pool never held 2 ready workers");
	ck_assert_int_eq(pool_ready(), 1);
	pool_lock();
	for (struct worker *w = pool.workers; w; w = w->next) {
		/* READY's kernel was claimed: a process of its own, not the worker. */
		ck_assert_int_gt(w->kernel_pid, 0);
		ck_assert_int_ne(w->kernel_pid, w->pid);
		ck_assert(w->ever_ready);
		ck_assert(!w->owned);
	}
	/* No more than the warm target: a turn later there are still two. */
	pool_unlock();
	turn();
	pool_lock();
	ck_assert_int_eq(pool_live_count(), 2);
	pool_unlock();
	pool_stop();
	ck_assert_ptr_null(pool.workers);
}
END_TEST

START_TEST(take_execute_release)
{
	struct call c;

	start_pool("child", 1);
	ck_assert(turn_until(one_idle));
	pool_lock();
	struct worker *w = take();
	ck_assert_int_eq(w->state, WORKER_ASSIGNED);
	ck_assert(w->owned);
	ck_assert_int_eq(pool_idle_count(), 0);
	ck_assert_int_eq(count_state("assigned"), 1);
	pool_unlock();

	/* The pool replaces what was taken. */
	ck_assert_msg(turn_until(one_idle), "the taken worker was not replaced");
	pool_lock();
	ck_assert_int_eq(pool_live_count(), 2);

	call_init(&c);
	pool_execute_start(w, &c, "1 + 1", 10, 0);
	ck_assert_ptr_eq(w->call, &c);
	pool_unlock();
	for (double end = clock_mono() + DEADLINE_S; !c.done && clock_mono() < end;)
		turn();
	pool_lock();
	ck_assert_msg(c.done, "no RESULT came");
	ck_assert_ptr_null(w->call);
	ck_assert(json_object_get_boolean(json_object_object_get(c.result, "success")));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(c.result, "stdout")),
			 "fake\n");
	call_clear(&c);

	/* Released: SHUTDOWN, then reaped and freed. */
	released_pid = w->pid;
	pool_release(w);
	ck_assert_int_eq(w->state, WORKER_CLOSING);
	ck_assert(!w->owned);
	pool_unlock();
	ck_assert_msg(turn_until(released_gone), "the released worker was never reaped");
	pool_lock();
	ck_assert_int_eq(pool_live_count(), 1);
	pool_unlock();
}
END_TEST

START_TEST(death_fails_call)
{
	struct call c;

	start_pool("child", 1);
	ck_assert(turn_until(one_idle));
	pool_lock();
	taken = take();
	/* Stopped, it cannot answer before it dies with the call in flight. */
	ck_assert_int_eq(kill(taken->pid, SIGSTOP), 0);
	call_init(&c);
	pool_execute_start(taken, &c, "1 + 1", 10, 0);
	ck_assert(!c.done);
	ck_assert_int_eq(kill(taken->pid, SIGKILL), 0);
	pool_unlock();
	ck_assert_msg(turn_until(taken_dead), "the killed worker was never reaped");
	pool_lock();
	ck_assert(c.done);
	ck_assert_str_eq(error_type(c.result), "WorkerDied");
	ck_assert_msg(strstr(error_message(c.result), "killed by signal 9") != NULL, "%s",
		      error_message(c.result));
	call_clear(&c);
	/* Held by its session, a dead worker stays listed, and says so. */
	ck_assert(listed(taken->pid));
	ck_assert_int_eq(taken->fd, -1);
	call_init(&c);
	pool_execute_start(taken, &c, "1 + 1", 10, 0);
	ck_assert(c.done);
	ck_assert_str_eq(error_type(c.result), "WorkerDied");
	ck_assert_msg(strstr(error_message(c.result), "start a new session") != NULL, "%s",
		      error_message(c.result));
	call_clear(&c);
	released_pid = taken->pid;
	pool_release(taken);
	ck_assert(!listed(released_pid));
	/* An assigned worker's death is not an early one. */
	ck_assert_int_eq(pool.early_deaths, 0);
	pool_unlock();
	ck_assert(turn_until(one_idle));
}
END_TEST

/* A worker that sends what its phase does not permit is killed; so many of
 * them in a row make refills back off, and takers are told no kernel came. */
static void
refused(const char *mode)
{
	char why[256] = "";

	start_pool(mode, 1);
	ck_assert_msg(turn_until(three_early_deaths), "%s workers were not refused", mode);
	pool_lock();
	ck_assert_int_eq(pool_idle_count(), 0);
	ck_assert(pool.backoff_until != 0 && pool.backoff_until >= time(NULL) - 1);
	ck_assert_ptr_null(pool_take(0, why, sizeof(why)));
	ck_assert_msg(strstr(why, "no kernel became ready") != NULL, "%s", why);
	ck_assert_int_eq(pool_ready(), 0);
	pool_unlock();
}

START_TEST(out_of_phase_refused)
{
	refused("early-result");
}
END_TEST

START_TEST(malformed_refused)
{
	refused("malformed");
}
END_TEST

START_TEST(stop_ends_all)
{
	char why[256] = "";

	start_pool("child", 2);
	ck_assert(turn_until(two_idle));
	pool_lock();
	taken = take();
	pid_t pids[2] = {pool.workers->pid, pool.workers->next->pid};
	pool_unlock();
	pool_stop();
	pool_lock();
	ck_assert(none_live());
	/* Owned by a session, the taken worker stays listed, dead. */
	ck_assert_int_eq(taken->state, WORKER_DEAD);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kill(pids[i], 0) == -1 && errno == ESRCH, 1);
	ck_assert_ptr_null(pool_take(1, why, sizeof(why)));
	ck_assert_str_eq(why, "the server is shutting down");
	pool_unlock();
	pool_refill();
	pool_lock();
	ck_assert_int_eq(pool_live_count(), 0);
	pool_unlock();
}
END_TEST

/* Wait in the queue as ticket `t`, not at all this time; 1 if the wait ended. */
static int
queue_try(struct pool_ticket *t, struct worker **w, char *why, size_t why_len)
{
	return pool_queue_wait(t, 60, 0, w, why, why_len);
}

/*
 * Kernels go to those who wait in the order they came, whoever asks: idle
 * workers are handed to the first in the queue; a worker handed to one
 * that leaves goes to the next; a wait that times out says where it stood.
 */
START_TEST(queue_first_come)
{
	struct pool_ticket t[3];
	struct worker *w[3] = {NULL, NULL, NULL};
	char why[512] = "";
	int len;

	start_pool("child", 2);
	ck_assert(turn_until(two_idle));
	pool_lock();
	for (int i = 0; i < 3; i++)
		pool_queue_join(&t[i]);
	ck_assert_int_eq(pool_queue_length(), 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(pool_queue_position(&t[i], &len), i + 1);
		ck_assert_int_eq(len, 3);
	}
	/* Two idle workers, and the third asks first: they go to the first two. */
	ck_assert_int_eq(queue_try(&t[2], &w[2], why, sizeof(why)), 0);
	ck_assert_int_eq(pool_queue_position(&t[0], NULL), 0);
	ck_assert_int_eq(pool_queue_position(&t[1], NULL), 0);
	ck_assert_int_eq(pool_queue_position(&t[2], &len), 1);
	ck_assert_int_eq(len, 1);
	ck_assert_int_eq(queue_try(&t[1], &w[1], why, sizeof(why)), 1);
	ck_assert_msg(w[1] != NULL, "the second got no worker: %s", why);
	ck_assert_int_eq(w[1]->state, WORKER_ASSIGNED);
	/* The first, handed a worker, leaves (its client went): the worker
	 * goes back, to the third. */
	pool_queue_leave(&t[0]);
	ck_assert_int_eq(pool_idle_count(), 0);
	ck_assert_int_eq(queue_try(&t[2], &w[2], why, sizeof(why)), 1);
	ck_assert_msg(w[2] != NULL && w[2] != w[1], "the third got no worker of its own: %s", why);
	pool_release(w[2]);
	/* None idle now (the loop does not turn to refill): a newcomer waits. */
	pool_queue_join(&t[2]);
	ck_assert_int_eq(queue_try(&t[2], &w[2], why, sizeof(why)), 0);
	ck_assert_int_eq(pool_queue_position(&t[2], &len), 1);
	ck_assert_int_eq(len, 1);
	pool_queue_leave(&t[2]);
	ck_assert_int_eq(pool_queue_length(), 0);
	/* A wait that ends without a kernel says where it stood. */
	pool_queue_join(&t[0]);
	pool_queue_join(&t[1]);
	ck_assert_int_eq(pool_queue_wait(&t[1], 0, -1, &w[2], why, sizeof(why)), 1);
	ck_assert_ptr_null(w[2]);
	ck_assert_msg(strstr(why, "no kernel became ready within 0 s") &&
			      strstr(why, "at position 2 of 2"),
		      "%s", why);
	ck_assert_int_eq(pool_queue_position(&t[0], &len), 1);
	ck_assert_int_eq(len, 1);
	pool_queue_leave(&t[0]);
	ck_assert_int_eq(pool_queue_length(), 0);
	pool_release(w[1]);
	pool_unlock();
}
END_TEST

static pid_t handed_pid;

static int
handed_reaped(void)
{
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->pid == handed_pid)
			return w->state == WORKER_DEAD;
	return 0;
}

/*
 * A worker handed to a waiting call dies before the call takes it: the call
 * goes back to the head of the queue and gets the next kernel, not an error.
 */
START_TEST(queue_handed_dies)
{
	struct pool_ticket t;
	struct worker *w = NULL;
	char why[512] = "";
	int got = 0;

	start_pool("child", 1);
	ck_assert(turn_until(one_idle));
	pool_lock();
	pool_queue_join(&t);
	pool_tick(); /* hands the idle worker to t */
	ck_assert_ptr_nonnull(t.given);
	ck_assert_int_eq(pool_queue_position(&t, NULL), 0);
	handed_pid = t.given->pid;
	ck_assert_int_eq(kill(handed_pid, SIGKILL), 0);
	pool_unlock();
	ck_assert_msg(turn_until(handed_reaped), "the handed worker was never reaped");
	for (double end = clock_mono() + DEADLINE_S; !got && clock_mono() < end; turn()) {
		pool_lock();
		got = queue_try(&t, &w, why, sizeof(why));
		if (!got)
			ck_assert_int_eq(pool_queue_position(&t, NULL), 1);
		pool_unlock();
	}
	ck_assert_msg(got && w != NULL, "no kernel after the handed one died: %s", why);
	pool_lock();
	ck_assert_int_ne(w->pid, handed_pid);
	ck_assert_int_eq(w->state, WORKER_ASSIGNED);
	ck_assert_int_eq(pool_queue_length(), 0);
	pool_release(w);
	pool_unlock();
}
END_TEST

/* After each test: no worker left, and the directories gone. */
static void
clean_up(void)
{
	int status;

	pool_stop();
	/* The parent removes what is left and ends once we hang up. */
	close(parent_link_fd());
	ck_assert_int_eq(waitpid(parent_pid, &status, 0), parent_pid);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(fs_remove_tree(tmpdir), 0);
}

/*
 * Kill and reap what failed tests left: a failed assertion ends a test's
 * process without clean_up, and Check kills its process group, workers
 * included, but not their kernels, which lead sessions of their own. As
 * the subreaper, this process inherits them.
 */
static void
kill_orphans(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], line[512];

	while (d != NULL && (e = readdir(d)) != NULL) {
		int pid = atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		FILE *f = pid > 0 ? fopen(path, "r") : NULL;
		if (f == NULL)
			continue;
		/* "pid (comm) state ppid ...", where comm may hold anything. */
		char *end = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		int ppid = 0;
		if (end != NULL && sscanf(end + 1, " %*c %d", &ppid) == 1 && ppid == getpid()) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		fclose(f);
	}
	if (d != NULL)
		closedir(d);
}

int
main(void)
{
	const char *top = getenv("top_builddir");

	snprintf(fake_worker, sizeof(fake_worker), "%s/tests/system/fake-worker",
		 top ? top : "..");
	if (access(fake_worker, X_OK) == -1) {
		printf("SKIP: %s is not built (make -C tests system/fake-worker)\n", fake_worker);
		return 77;
	}

	/* Each test in a process of its own (CK_FORK): the pool is global. */
	const TTest *const tests[] = {
		warm_pool_fills,     take_execute_release, death_fails_call,
		out_of_phase_refused, malformed_refused,    stop_ends_all,
		queue_first_come,    queue_handed_dies,
	};
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, NULL, clean_up);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		tcase_add_test(tc, tests[i]);
	Suite *suite = suite_create("pool");
	suite_add_tcase(suite, tc);

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		perror("prctl PR_SET_CHILD_SUBREAPER");
	SRunner *sr = srunner_create(suite);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	kill_orphans();
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
