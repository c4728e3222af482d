/*
 * test_front_confine.c - the front's confinement, read back from
 * /proc/self/status of a child that applied it: its own uid, CapEff,
 * CapPrm, CapInh, CapAmb and CapBnd all 0, NoNewPrivs 1, Seccomp 2 with the
 * filter; a call off the filter (fork) kills it with SIGSYS; a root front
 * without a user is refused. Root's cases need root; the unprivileged case
 * runs anywhere.
 */
#include "autoconf.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "front_confine.h"

#define NOBODY 65534

/* What a confined child reported, and how it ended. */
struct report {
	char status[8192]; /* /proc/self/status, or "ERR <message>" */
	int wstatus;
};

/*
 * Fork; the child runs `setup` (may be NULL), then front_confine(uid, gid,
 * filter), writes /proc/self/status (or its error) to a pipe, then forks
 * when `then_fork` (to die by the filter), and exits 0.
 */
static struct report
confined(void (*setup)(void), uid_t uid, gid_t gid, int filter, int then_fork)
{
	struct report rep;
	int p[2];

	memset(&rep, 0, sizeof(rep));
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		char buf[8192], err[256];
		int kept;
		close(p[0]);
		if (setup)
			setup();
		if (front_confine(uid, gid, filter, &kept, err, sizeof(err)) == -1) {
			int n = snprintf(buf, sizeof(buf), "ERR %s", err);
			(void)!write(p[1], buf, (size_t)n);
			_exit(0);
		}
		FILE *f = fopen("/proc/self/status", "re");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 64, f) : 0;
		if (f)
			fclose(f);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "BoundingKept:\t%d\n", kept);
		(void)!write(p[1], buf, n);
		close(p[1]);
		if (then_fork && fork() == 0)
			_exit(3); /* reached only if fork was allowed */
		_exit(0);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t n;
	while ((n = read(p[0], rep.status + got, sizeof(rep.status) - 1 - got)) > 0)
		got += (size_t)n;
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &rep.wstatus, 0), pid);
	return rep;
}

/* The value of status line `key` ("CapEff"), as text. */
static const char *
field(const struct report *r, const char *key, char *out, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\n%s:\t", key);
	const char *at = strstr(r->status, pat);
	ck_assert_msg(at != NULL, "no %s in: %s", key, r->status);
	at += strlen(pat);
	size_t n = strcspn(at, "\n");
	snprintf(out, len, "%.*s", (int)n, at);
	return out;
}

static void
is_zero_caps(const struct report *r, int bounding_too)
{
	static const char *const keys[] = {"CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd"};
	char v[64];

	for (size_t i = 0; i < 5; i++) {
		if (i == 4 && !bounding_too)
			continue;
		ck_assert_msg(strtoull(field(r, keys[i], v, sizeof(v)), NULL, 16) == 0,
			      "%s is %s", keys[i], v);
	}
	ck_assert_str_eq(field(r, "NoNewPrivs", v, sizeof(v)), "1");
}

START_TEST(root_becomes_front)
{
	char v[64];

	if (geteuid() != 0)
		return; /* needs root; the unprivileged case runs below */
	struct report r = confined(NULL, NOBODY, NOBODY, 0, 0);
	ck_assert_msg(strncmp(r.status, "ERR", 3) != 0, "%s", r.status);
	is_zero_caps(&r, 1);
	ck_assert_str_eq(field(&r, "Uid", v, sizeof(v)), "65534\t65534\t65534\t65534");
	ck_assert_str_eq(field(&r, "Gid", v, sizeof(v)), "65534\t65534\t65534\t65534");
	field(&r, "Groups", v, sizeof(v));
	ck_assert_msg(strspn(v, " ") == strlen(v), "supplementary groups left: %s", v);
	ck_assert_str_eq(field(&r, "Seccomp", v, sizeof(v)), "0");
	ck_assert_str_eq(field(&r, "BoundingKept", v, sizeof(v)), "0");
}
END_TEST

START_TEST(with_filter_and_killed_off_it)
{
	char v[64];

	if (geteuid() != 0)
		return;
	struct report r = confined(NULL, NOBODY, NOBODY, 1, 1);
	ck_assert_msg(strncmp(r.status, "ERR", 3) != 0, "%s", r.status);
	is_zero_caps(&r, 1);
	ck_assert_str_eq(field(&r, "Seccomp", v, sizeof(v)), "2");
	ck_assert_msg(WIFSIGNALED(r.wstatus) && WTERMSIG(r.wstatus) == SIGSYS,
		      "fork in the front: wait status %d, not SIGSYS", r.wstatus);
}
END_TEST

START_TEST(root_without_user_refused)
{
	if (geteuid() != 0)
		return;
	struct report r = confined(NULL, (uid_t)-1, (gid_t)-1, 0, 0);
	ck_assert_msg(strstr(r.status, "ERR front: would stay root") != NULL, "%s", r.status);
	r = confined(NULL, 0, 0, 0, 0);
	ck_assert_msg(strstr(r.status, "ERR front: still uid 0") != NULL, "%s", r.status);
}
END_TEST

/* An ordinary user: nobody, with the full bounding set root had. */
static void
become_nobody(void)
{
	if (geteuid() == 0 && setresuid(NOBODY, NOBODY, NOBODY) == -1)
		_exit(9);
}

START_TEST(unprivileged_front)
{
	char kept[64], bnd[64];

	struct report r = confined(become_nobody, (uid_t)-1, (gid_t)-1, 0, 0);
	ck_assert_msg(strncmp(r.status, "ERR", 3) != 0, "%s", r.status);
	is_zero_caps(&r, 0);
	/* No CAP_SETPCAP: the bounding set stays, and the call says so. */
	field(&r, "BoundingKept", kept, sizeof(kept));
	field(&r, "CapBnd", bnd, sizeof(bnd));
	ck_assert_str_eq(kept, strtoull(bnd, NULL, 16) ? "1" : "0");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("front_confine");
	TCase *tc = tcase_create("confine");

	tcase_add_test(tc, root_becomes_front);
	tcase_add_test(tc, with_filter_and_killed_off_it);
	tcase_add_test(tc, root_without_user_refused);
	tcase_add_test(tc, unprivileged_front);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
