/*
 * test_spill.c - spill files: created under codeexecd-output/ with fresh
 * names, never through a link the kernel planted (for the directory or a
 * file), given to the kernel's identity when asked, and cut at max_bytes
 * with the cut reported.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spill.h"

static char dir[64];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_spill.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The content of dir/rel, which must exist; caller frees. */
static char *
slurp(const char *rel, size_t *len)
{
	char path[256], *data = malloc(1 << 16);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	ck_assert_msg(fd != -1, "open %s: %s", path, strerror(errno));
	ssize_t n = read(fd, data, 1 << 16);
	ck_assert_int_ge(n, 0);
	close(fd);
	*len = (size_t)n;
	return data;
}

START_TEST(save_and_name)
{
	struct spill_place place = {.cwd = dir};
	char *rel = NULL, *rel2 = NULL, why[ERR_LEN] = "";
	size_t len;
	struct stat st;

	ck_assert_msg(spill_save(&place, &spill_output_dir, 7, "stdout", ".txt", "hello\n", 6, &rel, why,
				 sizeof(why)) == 0,
		      "%s", why);
	ck_assert_ptr_nonnull(rel);
	/* codeexecd-output/7-<8 hex>-stdout.txt */
	ck_assert_int_eq(strncmp(rel, SPILL_DIR "/7-", strlen(SPILL_DIR) + 3), 0);
	ck_assert_uint_eq(strlen(rel), strlen(SPILL_DIR "/7-12345678-stdout.txt"));
	ck_assert_str_eq(rel + strlen(rel) - strlen("-stdout.txt"), "-stdout.txt");
	char *data = slurp(rel, &len);
	ck_assert_uint_eq(len, 6);
	ck_assert_int_eq(memcmp(data, "hello\n", 6), 0);
	free(data);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, SPILL_DIR);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	/* The same request and kind never reuse a name. */
	ck_assert(spill_save(&place, &spill_output_dir, 7, "stdout", ".txt", "x", 1, &rel2, why, sizeof(why)) == 0);
	ck_assert_str_ne(rel, rel2);
	free(rel);
	free(rel2);
}
END_TEST

START_TEST(write_cut_at_limit)
{
	struct spill_place place = {.cwd = dir, .max_bytes = 10};
	char *rel = NULL, why[ERR_LEN] = "";
	off_t written = 0;
	size_t len;

	int fd = spill_create(&place, &spill_output_dir, 1, "stderr", ".txt", &rel, why, sizeof(why));
	ck_assert_msg(fd != -1, "%s", why);
	ck_assert_int_eq(spill_write(&place, fd, &written, "0123", 4), 0);
	ck_assert_int_eq(written, 4);
	ck_assert_int_eq(spill_write(&place, fd, &written, "456789abc", 9), 1);
	ck_assert_int_eq(written, 10);
	ck_assert_int_eq(spill_write(&place, fd, &written, "z", 1), 1);
	ck_assert_int_eq(written, 10);
	close(fd);
	char *data = slurp(rel, &len);
	ck_assert_uint_eq(len, 10);
	ck_assert_int_eq(memcmp(data, "0123456789", 10), 0);
	free(data);
	free(rel);
	/* spill_save reports the cut and returns no name. */
	rel = NULL;
	ck_assert_int_eq(spill_save(&place, &spill_output_dir, 2, "out", ".bin", "0123456789abc", 13, &rel, why, sizeof(why)), -1);
	ck_assert_ptr_null(rel);
	ck_assert_ptr_nonnull(strstr(why, "was cut at 10 bytes"));
	/* No limit: everything is written. */
	place.max_bytes = 0;
	ck_assert_int_eq(spill_save(&place, &spill_output_dir, 3, "out", ".bin", "0123456789abc", 13, &rel, why, sizeof(why)), 0);
	data = slurp(rel, &len);
	ck_assert_uint_eq(len, 13);
	free(data);
	free(rel);
}
END_TEST

START_TEST(planted_dir_link_refused)
{
	struct spill_place place = {.cwd = dir};
	char link[256], target[256], *rel = NULL, why[ERR_LEN] = "";

	/* The kernel replaced codeexecd-output with a link to somewhere else. */
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	ck_assert_int_eq(mkdir(target, 0700), 0);
	snprintf(link, sizeof(link), "%s/%s", dir, SPILL_DIR);
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(spill_create(&place, &spill_output_dir, 1, "stdout", ".txt", &rel, why, sizeof(why)), -1);
	ck_assert_ptr_null(rel);
	ck_assert_ptr_nonnull(strstr(why, SPILL_DIR));
	/* Nothing was written through the link. */
	ck_assert_int_eq(rmdir(target), 0);
}
END_TEST

START_TEST(missing_cwd)
{
	struct spill_place place = {.cwd = "/nonexistent/test_spill"};
	char *rel = NULL, why[ERR_LEN] = "";

	ck_assert_int_eq(spill_save(&place, &spill_output_dir, 1, "stdout", ".txt", "x", 1, &rel, why, sizeof(why)),
			 -1);
	ck_assert_ptr_null(rel);
	ck_assert_ptr_nonnull(strstr(why, "/nonexistent/test_spill"));
}
END_TEST

START_TEST(given_to_kernel_identity)
{
	struct spill_place place = {.cwd = dir, .chown = 1, .uid = 60321, .gid = 60322};
	char *rel = NULL, why[ERR_LEN] = "", path[256];
	struct stat st;

	if (geteuid() != 0) {
		/* Only root gives files away; an unprivileged chown must fail loudly. */
		ck_assert_int_eq(spill_save(&place, &spill_output_dir, 1, "stdout", ".txt", "x", 1, &rel, why, sizeof(why)), -1);
		ck_assert_ptr_nonnull(strstr(why, "chown"));
		return;
	}
	ck_assert_msg(spill_save(&place, &spill_output_dir, 1, "stdout", ".txt", "x", 1, &rel, why, sizeof(why)) == 0,
		      "%s", why);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, 60321);
	ck_assert_uint_eq(st.st_gid, 60322);
	snprintf(path, sizeof(path), "%s/%s", dir, SPILL_DIR);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, 60321);
	free(rel);
}
END_TEST

static Suite *
spill_suite(void)
{
	Suite *s = suite_create("spill");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, save_and_name);
	tcase_add_test(tc, write_cut_at_limit);
	tcase_add_test(tc, planted_dir_link_refused);
	tcase_add_test(tc, missing_cwd);
	tcase_add_test(tc, given_to_kernel_identity);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(spill_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
