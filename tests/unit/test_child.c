/* test_child.c - the child runner: output, input, deadline, stragglers, parent-death signal. */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"

extern char **environ;

static void
gather(void *arg, const char *data, size_t len)
{
	buf_add(arg, data, len);
}

/* Run `script` with sh in /tmp; its output into out. The wait status. */
static int
run_sh(const char *script, const char *input, int limit_s, struct buf *out, int *timed_out)
{
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)script, NULL};
	struct child_spec s = {.argv = argv, .envp = environ, .dir = "/tmp", .input = input,
			       .deadline = time(NULL) + limit_s, .on_output = gather, .arg = out};
	return child_run(&s, timed_out);
}

START_TEST(output_and_status)
{
	struct buf out;
	int to;

	buf_init(&out);
	int st = run_sh("pwd; echo err >&2; exit 3", NULL, 10, &out, &to);
	ck_assert_int_eq(to, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	ck_assert_str_eq(out.data, "/tmp\nerr\n");
	buf_free(&out);
	/* stdin is /dev/null without input. */
	buf_init(&out);
	st = run_sh("cat; echo done", NULL, 10, &out, &to);
	ck_assert_str_eq(out.data, "done\n");
	buf_free(&out);
}
END_TEST

/* Input larger than a pipe holds, written while the output is read. */
START_TEST(input)
{
	size_t n = 1 << 20;
	char *in = malloc(n + 1);
	memset(in, 'a', n);
	in[n] = '\0';
	struct buf out;
	int to;

	buf_init(&out);
	int st = run_sh("cat", in, 30, &out, &to);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_uint_eq(out.len, n);
	ck_assert(memcmp(out.data, in, n) == 0);
	buf_free(&out);
	free(in);
}
END_TEST

START_TEST(deadline)
{
	struct buf out;
	int to;
	time_t t0 = time(NULL);

	buf_init(&out);
	int st = run_sh("echo start; exec sleep 30", NULL, 1, &out, &to);
	ck_assert_int_eq(to, 1);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_int_le(time(NULL) - t0, 5);
	ck_assert_str_eq(out.data, "start\n");
	buf_free(&out);
}
END_TEST

/* A background process holding the output: killed the grace after the exit. */
START_TEST(stragglers)
{
	struct buf out;
	int to;
	time_t t0 = time(NULL);

	buf_init(&out);
	int st = run_sh("sleep 30 & exit 0", NULL, 20, &out, &to);
	ck_assert_int_eq(to, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_le(time(NULL) - t0, CHILD_STRAGGLER_GRACE_S + 3);
	buf_free(&out);
}
END_TEST

/* Every child has the parent-death signal: SIGKILL. */
START_TEST(parent_death_signal)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		return;
	char *argv[] = {(char *)"/usr/bin/python3", (char *)"-c",
			(char *)"import ctypes\n"
				"v = ctypes.c_int()\n"
				"ctypes.CDLL(None).prctl(2, ctypes.byref(v))\n"
				"print(v.value)\n",
			NULL};
	struct buf out;
	int to;

	buf_init(&out);
	struct child_spec s = {.argv = argv, .envp = environ, .dir = "/", .deadline = time(NULL) + 30,
			       .on_output = gather, .arg = &out};
	int st = child_run(&s, &to);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_str_eq(out.data, "9\n");
	buf_free(&out);
}
END_TEST

START_TEST(exec_failure)
{
	char *argv[] = {(char *)"/nonexistent/prog", NULL};
	struct buf out;
	int to;

	buf_init(&out);
	struct child_spec s = {.argv = argv, .envp = environ, .dir = "/", .deadline = time(NULL) + 10,
			       .on_output = gather, .arg = &out, .exec_error = "no such program\n"};
	int st = child_run(&s, &to);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	ck_assert_str_eq(out.data, "no such program\n");
	buf_free(&out);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("child");
	TCase *tc = tcase_create("child");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, output_and_status);
	tcase_add_test(tc, input);
	tcase_add_test(tc, deadline);
	tcase_add_test(tc, stragglers);
	tcase_add_test(tc, parent_death_signal);
	tcase_add_test(tc, exec_failure);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
