/*
 * test_seccomp_filter.c - the seccomp filter of kernel_network_mode seccomp,
 * installed for real in forked children: each rule gives its errno, Unix
 * sockets still work, a thread started before the lock is filtered too
 * (TSYNC), a non-native system call kills, /proc/self/status shows it, and
 * the lock refuses while an IP socket is open. Then the two filters that
 * kernels other than ipykernel get before their exec: the gated calls
 * notify while a listener is open and fail with ENOSYS once it is closed,
 * the others keep their errno, and no second listener can be had.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include "seccomp_filter.h"

/* Run fn in a child; return its wait status. */
static int
in_child(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

/* In a child: fail with a distinct status unless cond. */
#define EXPECT(n, cond)                                                                           \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "check %d failed: %s (errno %d)\n", n, #cond, errno);    \
			_exit(n);                                                                 \
		}                                                                                 \
	} while (0)

static void
lock_or_die(void)
{
	char err[256];

	if (codeexec_seccomp_lock(err, sizeof(err)) != 0) {
		fprintf(stderr, "lock: %s\n", err);
		_exit(99);
	}
}

static void
rules_child(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int sv[2];

	lock_or_die();
	EXPECT(1, socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == EPERM);
	EXPECT(2, socket(AF_INET6, SOCK_DGRAM, 0) == -1 && errno == EPERM);
	EXPECT(3, socket(AF_NETLINK, SOCK_RAW, 0) == -1 && errno == EPERM);
	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT(4, u >= 0);
	EXPECT(5, socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	EXPECT(6, write(sv[0], "x", 1) == 1);
	strcpy(sun.sun_path + 1, "codeexecd-test");
	EXPECT(7, connect(u, (struct sockaddr *)&sun, sizeof(sun)) == -1 && errno == EPERM);
	EXPECT(8, bind(u, (struct sockaddr *)&sun, sizeof(sun)) == -1 && errno == EPERM);
	EXPECT(9, listen(u, 1) == -1 && errno == EPERM);
	EXPECT(10, unshare(CLONE_NEWNET) == -1 && errno == EPERM);
	EXPECT(11, setns(0, 0) == -1 && errno == EPERM);
	EXPECT(12, syscall(SYS_clone3, NULL, 0) == -1 && errno == ENOSYS);
	EXPECT(13, syscall(SYS_io_uring_setup, 4, NULL) == -1 && errno == EPERM);
	EXPECT(14, syscall(SYS_ptrace, 0, 0, 0, 0) == -1 && errno == EPERM);
	EXPECT(15, syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0) == -1 &&
			   errno == EPERM);
	EXPECT(16, syscall(SYS_pidfd_getfd, 0, 0, 0) == -1 && errno == EPERM);
	EXPECT(17, syscall(SYS_bpf, 0, NULL, 0) == -1 && errno == EPERM);
	EXPECT(18, syscall(SYS_userfaultfd, 0) == -1 && errno == EPERM);
	EXPECT(19, syscall(SYS_keyctl, 0, 0) == -1 && errno == EPERM);
	EXPECT(20, syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) == -1 && errno == EPERM);
	/* A plain fork (clone without namespace flags) still works. */
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	EXPECT(21, p > 0 && waitpid(p, NULL, 0) == p);
}

START_TEST(rules_give_their_errno)
{
	int st = in_child(rules_child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

static void
status_child(void)
{
	char text[8192];
	FILE *f;

	lock_or_die();
	f = fopen("/proc/self/status", "r");
	EXPECT(1, f != NULL);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	EXPECT(2, strstr(text, "\nSeccomp:\t2\n") != NULL);
	EXPECT(3, strstr(text, "\nNoNewPrivs:\t1\n") != NULL);
	EXPECT(4, prctl(PR_GET_DUMPABLE) == 0);
}

START_TEST(status_shows_filter)
{
	int st = in_child(status_child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

static volatile int go;
static volatile int thread_errno = -1;

static void *
early_thread(void *arg)
{
	(void)arg;
	while (!go)
		usleep(1000);
	thread_errno = socket(AF_INET, SOCK_STREAM, 0) == -1 ? errno : 0;
	return NULL;
}

static void
tsync_child(void)
{
	pthread_t t;

	EXPECT(1, pthread_create(&t, NULL, early_thread, NULL) == 0);
	lock_or_die();
	go = 1;
	pthread_join(t, NULL);
	EXPECT(2, thread_errno == EPERM);
}

START_TEST(threads_started_before_are_filtered)
{
	int st = in_child(tsync_child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

static void
x32_child(void)
{
	lock_or_die();
	syscall(0x40000000 | SYS_getpid); /* an x32 number: another ABI */
	_exit(50);
}

START_TEST(other_abi_is_killed)
{
	int st = in_child(x32_child);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "child status %#x", st);
}
END_TEST

static void
open_ip_child(void)
{
	char err[256];
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	EXPECT(1, s >= 0);
	EXPECT(2, codeexec_seccomp_lock(err, sizeof(err)) == -1);
	EXPECT(3, strstr(err, "is a socket of family 2, not AF_UNIX") != NULL);
}

START_TEST(open_ip_socket_refused)
{
	int st = in_child(open_ip_child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

/* Install prog with flags the way the worker's child does; the result of seccomp(2). */
static int
install(struct sock_fprog *prog, unsigned flags)
{
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
}

static void
exported_child(void)
{
	struct sock_fprog gate, deny;
	char err[256];
	int sv[2];

	EXPECT(1, seccomp_filter_export(1, &gate, err, sizeof(err)) == 0 && gate.len > 0);
	EXPECT(2, seccomp_filter_export(0, &deny, err, sizeof(err)) == 0 && deny.len > 0);
	EXPECT(3, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	int listener = install(&gate, SECCOMP_FILTER_FLAG_NEW_LISTENER);
	EXPECT(4, listener >= 0);
	EXPECT(5, install(&deny, 0) == 0);
	/* The worker's thread would answer now; closed, the gate refuses for good. */
	EXPECT(6, close(listener) == 0);
	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT(7, u >= 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	strcpy(sun.sun_path + 1, "codeexecd-test-gate");
	EXPECT(8, bind(u, (struct sockaddr *)&sun, sizeof(sun)) == -1 && errno == ENOSYS);
	EXPECT(9, listen(u, 1) == -1 && errno == ENOSYS);
	EXPECT(10, socket(AF_INET, SOCK_DGRAM, 0) == -1 && errno == ENOSYS);
	EXPECT(11, connect(u, (struct sockaddr *)&sun, sizeof(sun)) == -1 && errno == EPERM);
	EXPECT(12, sendto(sv[0], "x", 1, 0, (struct sockaddr *)&sun, sizeof(sun)) == -1 &&
			   errno == EPERM);
	EXPECT(13, syscall(SYS_io_uring_setup, 1, NULL) == -1 && errno == EPERM);
	/* A listener of its own would let it answer its own gated calls. */
	EXPECT(14, install(&gate, SECCOMP_FILTER_FLAG_NEW_LISTENER) == -1 && errno == EPERM);
	EXPECT(15, write(sv[0], "x", 1) == 1);
	free(gate.filter);
	free(deny.filter);
}

START_TEST(exported_filters_gate)
{
	int st = in_child(exported_child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}
END_TEST

static Suite *
filter_suite(void)
{
	Suite *s = suite_create("seccomp_filter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, rules_give_their_errno);
	tcase_add_test(tc, status_shows_filter);
	tcase_add_test(tc, threads_started_before_are_filtered);
	tcase_add_test(tc, other_abi_is_killed);
	tcase_add_test(tc, open_ip_socket_refused);
	tcase_add_test(tc, exported_filters_gate);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(filter_suite());
	srunner_set_fork_status(sr, CK_NOFORK); /* each test forks its own child */
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
