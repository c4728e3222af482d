/*
 * test_fs_copy.c - the copy of a tree someone else filled: links not
 * followed, a FIFO that does not block it, hard links as content, modes
 * masked, a directory of mode 0, another owner's entries, and the byte cap.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fs_copy.h"
#include "fs_tree.h"

static char top[64];
static int src, dst;

static void
put(const char *name, const char *text, mode_t mode)
{
	int fd = openat(src, name, O_WRONLY | O_CREAT | O_EXCL, mode);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	fchmod(fd, mode);
	close(fd);
}

static void
setup(void)
{
	snprintf(top, sizeof(top), "/tmp/test_fs_copy.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	int t = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(mkdirat(t, "src", 0700), 0);
	ck_assert_int_eq(mkdirat(t, "dst", 0700), 0);
	ck_assert_int_eq(mkdirat(t, "outside", 0700), 0);
	src = openat(t, "src", O_RDONLY | O_DIRECTORY);
	dst = openat(t, "dst", O_RDONLY | O_DIRECTORY);
	int out = openat(t, "outside", O_RDONLY | O_DIRECTORY);
	int fd = openat(out, "secret", O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "secret", 6), 6);
	close(fd);
	close(out);
	close(t);
}

static void
teardown(void)
{
	close(src);
	close(dst);
	fs_remove_tree(top);
}

/* The copy's entry `path` (under dst): its stat, or -1. */
static int
copied(const char *path, struct stat *sb)
{
	return fstatat(dst, path, sb, AT_SYMLINK_NOFOLLOW);
}

START_TEST(links_fifos_and_modes)
{
	struct fs_copy_stats st;
	struct stat sb;
	char path[128], buf[16];

	put("plain", "hello", 0644);
	put("tool", "#!/bin/sh\n", 0755);
	ck_assert_int_eq(linkat(src, "plain", src, "hard", 0), 0);
	snprintf(path, sizeof(path), "%s/outside/secret", top);
	ck_assert_int_eq(symlinkat(path, src, "to_secret"), 0);
	snprintf(path, sizeof(path), "%s/outside", top);
	ck_assert_int_eq(symlinkat(path, src, "to_outside_dir"), 0);
	ck_assert_int_eq(mkfifoat(src, "fifo", 0600), 0);
	ck_assert_int_eq(mkdirat(src, "sub", 0755), 0);
	int sub = openat(src, "sub", O_RDONLY | O_DIRECTORY);
	int fd = openat(sub, "deep", O_WRONLY | O_CREAT, 0666);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	close(fd);
	close(sub);

	ck_assert_int_eq(fs_copy_tree(src, dst, (uid_t)-1, (uid_t)-1, (gid_t)-1, 1 << 20, 1000,
				      &st), 0);
	ck_assert_int_eq(st.files, 4); /* plain, tool, hard, sub/deep */
	ck_assert_int_eq(st.dirs, 1);
	ck_assert_int_eq(st.bytes, 5 + 10 + 5 + 3);
	ck_assert_int_eq(st.skipped, 3); /* two links and the FIFO */
	ck_assert_int_eq(copied("to_secret", &sb), -1);
	ck_assert_int_eq(copied("to_outside_dir", &sb), -1);
	ck_assert_int_eq(copied("fifo", &sb), -1);
	ck_assert_int_eq(copied("plain", &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0600);
	ck_assert_int_eq(sb.st_nlink, 1); /* a hard link is copied as content */
	ck_assert_int_eq(copied("hard", &sb), 0);
	ck_assert_int_eq(sb.st_nlink, 1);
	ck_assert_int_eq(copied("tool", &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0700);
	ck_assert_int_eq(copied("sub", &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0700);
	fd = openat(dst, "sub/deep", O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 3);
	close(fd);
}
END_TEST

START_TEST(socket_and_mode_0_dir)
{
	struct fs_copy_stats st;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat sb;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/src/sock", top);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(mkdirat(src, "closed", 0700), 0);
	int c = openat(src, "closed", O_RDONLY | O_DIRECTORY);
	int fd = openat(c, "inside", O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	fchmod(c, 0);
	close(c);

	ck_assert_int_eq(fs_copy_tree(src, dst, (uid_t)-1, (uid_t)-1, (gid_t)-1, 1 << 20, 1000,
				      &st), 0);
	ck_assert_int_eq(copied("sock", &sb), -1);
	if (geteuid() == 0) { /* root reads it: copied, and its copy is 0700 */
		ck_assert_int_eq(st.skipped, 1);
		ck_assert_int_eq(copied("closed/inside", &sb), 0);
		ck_assert_int_eq(copied("closed", &sb), 0);
		ck_assert_int_eq(sb.st_mode & 07777, 0700);
	} else { /* left out, and the copy goes on */
		ck_assert_int_eq(st.skipped, 2);
		ck_assert_int_eq(copied("closed", &sb), -1);
	}
	fchmodat(src, "closed", 0700, 0);
	close(s);
}
END_TEST

START_TEST(cap)
{
	struct fs_copy_stats st;

	put("a", "0123456789", 0600);
	put("b", "0123456789", 0600);
	ck_assert_int_eq(fs_copy_tree(src, dst, (uid_t)-1, (uid_t)-1, (gid_t)-1, 20, 1000,
				      &st), 0);
	ck_assert_int_eq(st.bytes, 20);
	char path[96];
	snprintf(path, sizeof(path), "%s/dst2", top);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	int dst2 = open(path, O_RDONLY | O_DIRECTORY);
	errno = 0;
	ck_assert_int_eq(fs_copy_tree(src, dst2, (uid_t)-1, (uid_t)-1, (gid_t)-1, 19, 1000,
				      &st), -1);
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_int_le(st.bytes, 19);
	close(dst2);
}
END_TEST

/* The entry cap: every entry met counts, a skipped one too. */
START_TEST(entry_cap)
{
	struct fs_copy_stats st;
	char name[16];

	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "e%02d", i);
		put(name, "", 0600);
	}
	ck_assert_int_eq(symlinkat("/etc/passwd", src, "link"), 0);
	errno = 0;
	ck_assert_int_eq(fs_copy_tree(src, dst, (uid_t)-1, (uid_t)-1, (gid_t)-1, 1 << 20, 30, &st),
			 -1);
	ck_assert_int_eq(errno, EMLINK);
	ck_assert_int_eq(st.files + st.skipped, 30);
	char path[96];
	snprintf(path, sizeof(path), "%s/dst2", top);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	int dst2 = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(fs_copy_tree(src, dst2, (uid_t)-1, (uid_t)-1, (gid_t)-1, 1 << 20, 31, &st),
			 0);
	ck_assert_int_eq(st.files, 30);
	ck_assert_int_eq(st.skipped, 1);
	close(dst2);
}
END_TEST

/* Only the owner's entries: a hard link to another's file is not copied;
 * the copy is given to the new owner (root only: chown). */
START_TEST(owners_only)
{
	struct fs_copy_stats st;
	struct stat sb;

	if (geteuid() != 0)
		return; /* needs chown */
	put("mine", "m", 0600);
	put("theirs", "t", 0600);
	ck_assert_int_eq(fchownat(src, "theirs", 4242, 4242, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(mkdirat(src, "theirdir", 0700), 0);
	ck_assert_int_eq(fchownat(src, "theirdir", 4242, 4242, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fs_copy_tree(src, dst, geteuid(), 4343, 4343, 1 << 20, 1000,
				      &st), 0);
	ck_assert_int_eq(st.files, 1);
	ck_assert_int_eq(st.skipped, 2);
	ck_assert_int_eq(copied("theirs", &sb), -1);
	ck_assert_int_eq(copied("theirdir", &sb), -1);
	ck_assert_int_eq(copied("mine", &sb), 0);
	ck_assert_int_eq(sb.st_uid, 4343);
	ck_assert_int_eq(sb.st_gid, 4343);
}
END_TEST

START_TEST(depth_bound)
{
	struct fs_copy_stats st;
	int d = dup(src);

	for (int i = 0; i <= FS_COPY_DEPTH_MAX; i++) {
		ck_assert_int_eq(mkdirat(d, "d", 0700), 0);
		int next = openat(d, "d", O_RDONLY | O_DIRECTORY);
		close(d);
		d = next;
	}
	close(d);
	ck_assert_int_eq(fs_copy_tree(src, dst, (uid_t)-1, (uid_t)-1, (gid_t)-1, 1 << 20, 1000,
				      &st), 0);
	ck_assert_int_eq(st.dirs, FS_COPY_DEPTH_MAX);
	ck_assert_int_eq(st.skipped, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fs_copy");
	TCase *tc = tcase_create("copy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, links_fifos_and_modes);
	tcase_add_test(tc, socket_and_mode_0_dir);
	tcase_add_test(tc, cap);
	tcase_add_test(tc, entry_cap);
	tcase_add_test(tc, owners_only);
	tcase_add_test(tc, depth_bound);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
