/*
 * test_secret_file.c - secret files (secret_file.h): what the parent
 * refuses (group or other bits, a kernel's owner, not a regular file), the
 * copy the front reads, a reread after an edit in place, and a path that
 * was never opened.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secret_file.h"
#include "xmalloc.h"

static char dir[] = "/tmp/test_secret_file.XXXXXX";
static const struct secret_deny nobody = {1, 0, NULL};

static char *
write_file(const char *name, const char *text, mode_t mode)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

START_TEST(refused)
{
	char why[512];
	char *group = write_file("group", "k\n", 0640), *other = write_file("other", "k\n", 0604);
	char *own = write_file("own", "k\n", 0600);
	struct secret_deny mine = {getuid(), getuid(), "codeexecd"};

	ck_assert_int_eq(secret_file_open("auth.tokens_file", group, &nobody, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "auth.tokens_file") && strstr(why, "mode 0640") &&
		      strstr(why, "chmod 600"), "%s", why);
	ck_assert_int_eq(secret_file_open("k", other, &nobody, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "mode 0604"), "%s", why);
	ck_assert_int_eq(secret_file_open("k", own, &mine, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "owned by codeexecd") && strstr(why, "chown root"), "%s", why);
	ck_assert_int_eq(secret_file_open("k", dir, &nobody, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "not a regular file"), "%s", why);
	char *gone = xasprintf("%s/none", dir);
	ck_assert_int_eq(secret_file_open("k", gone, &nobody, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "No such file"), "%s", why);
	/* None of them is there to read. */
	ck_assert_ptr_null(secret_file_read("k", group, NULL, why, sizeof(why)));
	ck_assert_msg(strstr(why, "not opened by the daemon at start-up"), "%s", why);
	free(gone);
	free(group);
	free(other);
	free(own);
}
END_TEST

START_TEST(copy_and_reread)
{
	char why[512];
	size_t n;
	char *path = write_file("ok", "first\n", 0600);

	ck_assert_msg(secret_file_open("k", path, &nobody, why, sizeof(why)) == 0, "%s", why);
	size_t count = secret_file_count();
	ck_assert_int_eq(secret_file_open("k", path, &nobody, why, sizeof(why)), 0);
	ck_assert_uint_eq(secret_file_count(), count); /* opened once */
	char *t = secret_file_read("k", path, &n, why, sizeof(why));
	ck_assert_str_eq(t, "first\n");
	ck_assert_uint_eq(n, 6);
	free(t);
	/* The copy is sealed: nobody writes to it. */
	ck_assert_int_eq(write(secret_file_fd(count - 1), "x", 1), -1);
	/* Edited in place: SIGHUP's reread sees it. */
	FILE *f = fopen(path, "w");
	fputs("second\n", f);
	fclose(f);
	t = secret_file_read("k", path, &n, why, sizeof(why));
	ck_assert_str_eq(t, "first\n");
	free(t);
	secret_file_reread();
	t = secret_file_read("k", path, &n, why, sizeof(why));
	ck_assert_str_eq(t, "second\n");
	free(t);
	/* Loosened since: the copy read before stays. */
	chmod(path, 0644);
	f = fopen(path, "w");
	fputs("third\n", f);
	fclose(f);
	secret_file_reread();
	t = secret_file_read("k", path, &n, why, sizeof(why));
	ck_assert_str_eq(t, "second\n");
	free(t);
	free(path);
}
END_TEST

START_TEST(front_side)
{
	char why[512];
	char *path = write_file("front", "parent's\n", 0600);

	ck_assert_msg(secret_file_open("k", path, &nobody, why, sizeof(why)) == 0, "%s", why);
	int copy = dup(secret_file_fd(secret_file_count() - 1));
	/* As the front: what it inherited is closed and forgotten; the parent sends it. */
	secret_file_forget();
	ck_assert_uint_eq(secret_file_count(), 0);
	ck_assert_ptr_null(secret_file_read("k", path, NULL, why, sizeof(why)));
	secret_file_put(path, copy);
	char *t = secret_file_read("k", path, NULL, why, sizeof(why));
	ck_assert_msg(t != NULL, "%s", why);
	ck_assert_str_eq(t, "parent's\n");
	free(t);
	free(path);
}
END_TEST

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	Suite *s = suite_create("secret_file");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, refused);
	tcase_add_test(tc, copy_and_reread);
	tcase_add_test(tc, front_side);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char *cmd = xasprintf("rm -rf %s", dir);
	if (system(cmd) != 0)
		failed++;
	free(cmd);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
