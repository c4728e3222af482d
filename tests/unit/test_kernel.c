/*
 * test_kernel.c - one kernel process and its sockets (kernel.c): the
 * runtime directory is 0700 whatever the umask; a program that cannot run
 * or a working directory that does not exist fails with a message naming
 * it; a kernel gets only its own environment and PATH, and the connection
 * file as a descriptor; how it ended is told (status, signal) with its
 * last lines; kernel_destroy kills its whole process group; the start-up
 * deadline holds; and a real ipykernel (when Debian's python3 has it)
 * completes the handshake and shuts down on request. Kernels run with
 * kernel_network_mode inherit; the other modes are test_sandbox's.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "clock.h"
#include "kernel.h"

static char dir[64];	     /* the kernel's working directory */
static char runtime[128];    /* its runtime directory */
static void *zctx;
static struct jupyter_session sess;
static struct sandbox sb = {.mode = NET_INHERIT};

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_kernel.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(runtime, sizeof(runtime), "%s/run", dir);
	ck_assert_int_eq(kernel_runtime_create(runtime), 0);
	zctx = zmq_ctx_new();
	jupyter_session_init(&sess, NULL);
	/* Orphaned grandchildren come to us, so the test can see them die. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void
teardown(void)
{
	char cmd[128];

	zmq_ctx_term(zctx);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Start `argv` with environment `envp` in dir; NULL with why[why_len] on failure. */
static struct kernel *
start(char **argv, char **envp, double startup_s, char *why, size_t why_len)
{
	struct kernel_spec spec = {.argv = argv, .envp = envp, .cwd = dir, .runtime_dir = runtime,
				   .startup_timeout_s = startup_s, .sb = &sb};
	why[0] = '\0';
	return kernel_start(&spec, zctx, &sess, why, why_len);
}

/* Wait (at most 30 s) for the kernel to exit, and reap it. */
static void
wait_reaped(struct kernel *k)
{
	double end = clock_mono() + 30;
	struct pollfd p = {k->pidfd, POLLIN, 0};

	while (!kernel_reap(k)) {
		ck_assert_msg(clock_mono() < end, "kernel %d did not exit", (int)k->pid);
		poll(&p, 1, 1000);
	}
}

static char *plain_env[] = {"PATH=/usr/bin:/bin", "FOO=bar", NULL};

START_TEST(runtime_dir_private)
{
	char other[160];
	struct stat st;

	ck_assert_int_eq(stat(runtime, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	mode_t old = umask(0);
	snprintf(other, sizeof(other), "%s/open-umask", dir);
	ck_assert_int_eq(kernel_runtime_create(other), 0);
	umask(old);
	ck_assert_int_eq(stat(other, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	/* One that exists already is not taken over. */
	ck_assert_int_eq(kernel_runtime_create(other), -1);
	kernel_runtime_remove(other);
	ck_assert_int_eq(access(other, F_OK), -1);
	kernel_runtime_remove(other); /* gone already: quiet */
}
END_TEST

START_TEST(cannot_execute)
{
	char *argv[] = {"/nonexistent/kernel", "-f", "{connection_file}", NULL};
	char why[ERR_LEN] = "";

	ck_assert_ptr_null(start(argv, plain_env, 10, why, sizeof(why)));
	ck_assert_str_eq(why, "cannot execute /nonexistent/kernel: No such file or directory");
	/* A bare name is looked up on the kernel's PATH, not ours. */
	char *bare[] = {"no-such-kernel-program", NULL};
	ck_assert_ptr_null(start(bare, plain_env, 10, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "cannot execute no-such-kernel-program"));
	/* Nothing is left in the runtime directory. */
	ck_assert_int_eq(rmdir(runtime), 0);
}
END_TEST

START_TEST(bad_cwd)
{
	char *argv[] = {"/bin/true", NULL};
	struct kernel_spec spec = {.argv = argv, .envp = plain_env, .cwd = "/nonexistent/cwd",
				   .runtime_dir = runtime, .startup_timeout_s = 10, .sb = &sb};
	char why[ERR_LEN] = "";

	ck_assert_ptr_null(kernel_start(&spec, zctx, &sess, why, sizeof(why)));
	ck_assert_str_eq(why, "cannot start the kernel in /nonexistent/cwd: No such file or directory");
}
END_TEST

START_TEST(runtime_dir_too_long)
{
	char *argv[] = {"/bin/true", NULL};
	char long_dir[200];
	memset(long_dir, 'x', sizeof(long_dir) - 1);
	long_dir[0] = '/';
	long_dir[sizeof(long_dir) - 1] = '\0';
	struct kernel_spec spec = {.argv = argv, .envp = plain_env, .cwd = dir,
				   .runtime_dir = long_dir, .startup_timeout_s = 10, .sb = &sb};
	char why[ERR_LEN] = "";

	ck_assert_ptr_null(kernel_start(&spec, zctx, &sess, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "too long for Unix socket paths"));
}
END_TEST

START_TEST(exit_status_and_output)
{
	/* "sh" through the kernel's PATH; the placeholder becomes a descriptor path. */
	char *argv[] = {"sh", "-c",
			"echo \"env $FOO ${HOME:-nohome}\"; echo \"conn {connection_file}\"; "
			"test -r {connection_file} && echo readable; printf partial; exit 3",
			NULL};
	char why[ERR_LEN] = "";
	struct kernel *k = start(argv, plain_env, 10, why, sizeof(why));

	ck_assert_msg(k != NULL, "%s", why);
	ck_assert_int_gt(k->pid, 0);
	ck_assert(!kernel_ready(k));
	wait_reaped(k);
	kernel_read_output(k);
	const char *tail = kernel_output_tail(k);
	ck_assert_msg(strstr(tail, "env bar nohome\n") != NULL, "tail: %s", tail);
	ck_assert_msg(strstr(tail, "conn /proc/self/fd/") != NULL, "tail: %s", tail);
	ck_assert_msg(strstr(tail, "readable\n") != NULL, "tail: %s", tail);
	ck_assert_msg(strstr(tail, "partial\n") != NULL, "tail: %s", tail); /* flushed at EOF */
	char *text = kernel_exit_text(k);
	ck_assert_str_eq(text, "kernel exited with status 3");
	free(text);
	kernel_destroy(&k, &sess, 1);
	ck_assert_ptr_null(k);
	/* The ipc socket files are gone; the directory stays for the next kernel. */
	ck_assert_int_eq(rmdir(runtime), 0);
}
END_TEST

START_TEST(killed_by_signal)
{
	char *argv[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
	char why[ERR_LEN] = "";
	struct kernel *k = start(argv, plain_env, 10, why, sizeof(why));

	ck_assert_msg(k != NULL, "%s", why);
	wait_reaped(k);
	char *text = kernel_exit_text(k);
	ck_assert_str_eq(text, "kernel died: killed by signal 11 (SIGSEGV)");
	free(text);
	kernel_destroy(&k, &sess, 0);
}
END_TEST

START_TEST(destroy_kills_group)
{
	/* A kernel that started a subprocess and ignores SIGTERM and SIGINT. */
	char *argv[] = {"/bin/sh", "-c", "trap '' TERM INT; sleep 1000 & echo $!; wait", NULL};
	char why[ERR_LEN] = "";
	struct kernel *k = start(argv, plain_env, 10, why, sizeof(why));
	char line[64] = "";
	double end = clock_mono() + 30;

	ck_assert_msg(k != NULL, "%s", why);
	/* Read the subprocess's pid from the kernel's output. */
	while (strchr(kernel_output_tail(k), '\n') == NULL) {
		struct pollfd p = {k->out_fd, POLLIN, 0};
		ck_assert_msg(clock_mono() < end, "no output from the kernel");
		poll(&p, 1, 1000);
		kernel_read_output(k);
	}
	snprintf(line, sizeof(line), "%s", kernel_output_tail(k));
	pid_t child = (pid_t)atoi(line);
	ck_assert_int_gt(child, 1);
	ck_assert_int_eq(kernel_reap(k), 0); /* still running */
	/* An interrupt by signal reaches the group; both ignore or outlive it. */
	kernel_interrupt(k, &sess, 0);
	ck_assert_int_eq(kill(child, 0), 0);
	pid_t pid = k->pid;
	kernel_destroy(&k, &sess, 1);
	ck_assert_int_eq(kill(pid, 0), -1);
	/* The subprocess died with it (we are its reaper now). */
	int st;
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}
END_TEST

START_TEST(startup_deadline)
{
	char *argv[] = {"/bin/sh", "-c", "exec sleep 1000", NULL};
	char why[ERR_LEN] = "";
	struct kernel *k = start(argv, plain_env, 0, why, sizeof(why));

	ck_assert_msg(k != NULL, "%s", why);
	/* It never answers: past the deadline the tick says so. */
	ck_assert(kernel_handshake_tick(k, &sess, clock_mono() + 1) < 0);
	kernel_destroy(&k, &sess, 0);
	k = start(argv, plain_env, 60, why, sizeof(why));
	ck_assert_msg(k != NULL, "%s", why);
	double left = kernel_handshake_tick(k, &sess, clock_mono());
	ck_assert(left >= 0 && left <= 60);
	kernel_destroy(&k, &sess, 0);
}
END_TEST

/* Feed what the kernel sends on `sock` to the handshake; 1 if a message came. */
static int
drain(struct kernel *k, void *sock, const char *channel)
{
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	int got = 0;

	while (jupyter_recv(sock, k->signer, &m, err, sizeof(err)) == JUPYTER_OK) {
		kernel_handshake_msg(k, channel, &m);
		jupyter_msg_clear(&m);
		got = 1;
	}
	return got;
}

START_TEST(ipykernel_handshake)
{
	char *argv[] = {"/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}",
			NULL};
	char home[100];
	snprintf(home, sizeof(home), "HOME=%s", dir); /* IPython writes ~/.ipython */
	char *envp[] = {"PATH=/usr/bin:/bin", home, "LANG=C.UTF-8", NULL};
	char why[ERR_LEN] = "";
	struct kernel *k = start(argv, envp, 60, why, sizeof(why));

	ck_assert_msg(k != NULL, "%s", why);
	ck_assert_ptr_eq(sess.signer, k->signer);
	while (!kernel_ready(k)) {
		double wait = kernel_handshake_tick(k, &sess, clock_mono());
		ck_assert_msg(wait >= 0, "no kernel_info_reply within 60 s: %s",
			      kernel_output_tail(k));
		zmq_pollitem_t it[] = {{k->shell, 0, ZMQ_POLLIN, 0}, {k->iopub, 0, ZMQ_POLLIN, 0}};
		zmq_poll(it, 2, (long)(wait * 1000) + 1);
		drain(k, k->shell, "shell");
		drain(k, k->iopub, "iopub");
		ck_assert_int_eq(kernel_reap(k), 0);
	}
	ck_assert_str_eq(k->language, "python");
	ck_assert(kernel_handshake_tick(k, &sess, clock_mono()) > 0);
	/* Asked on control, it shuts down by itself: exit status 0, no signal. */
	pid_t pid = k->pid;
	kernel_destroy(&k, &sess, 1);
	ck_assert_ptr_null(sess.signer); /* no signing with a freed key */
	ck_assert_int_eq(kill(pid, 0), -1);
}
END_TEST

static Suite *
kernel_suite(int with_ipykernel)
{
	Suite *s = suite_create("kernel");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, runtime_dir_private);
	tcase_add_test(tc, cannot_execute);
	tcase_add_test(tc, bad_cwd);
	tcase_add_test(tc, runtime_dir_too_long);
	tcase_add_test(tc, exit_status_and_output);
	tcase_add_test(tc, killed_by_signal);
	tcase_add_test(tc, destroy_kills_group);
	tcase_add_test(tc, startup_deadline);
	if (with_ipykernel)
		tcase_add_test(tc, ipykernel_handshake);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int ipykernel = system("/usr/bin/python3 -c 'import ipykernel' >/dev/null 2>&1") == 0;
	SRunner *sr = srunner_create(kernel_suite(ipykernel));
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	if (!ipykernel) {
		printf("SKIP: test_kernel: ipykernel_handshake did not run: /usr/bin/python3 "
		       "cannot import ipykernel (apt-get install python3-ipykernel)\n");
		return 77;
	}
	return EXIT_SUCCESS;
}
