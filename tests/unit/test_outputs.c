/*
 * test_outputs.c - the worker's outputs/ (worker/outputs.c) on a real
 * directory: it is made; listing gives regular files only, sorted, with
 * sizes and types (magic bytes before extensions); a snapshot tells what a
 * call created or changed; opening refuses "..", absolute paths, links
 * (also as a middle component), FIFOs without waiting, directories and
 * devices, and passes a regular file's descriptor; writing an upload below
 * the working directory replaces a file by rename (a descriptor open on
 * the old one keeps its bytes), masks the mode, honours the file size
 * limit, leaves no temporary file, and refuses what opening refuses.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs_tree.h"
#include "outputs.h"
#include "xmalloc.h"

static char dir[] = "/tmp/test_outputs.XXXXXX";
static struct spill_place place;

/* The path dir/FMT..., good until the next call. */
static const char * __attribute__((format(printf, 1, 2)))
at(const char *fmt, ...)
{
	static char path[4096];
	char rel[4000];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return path;
}

static void
put(const char *rel, const void *data, size_t len)
{
	int fd = open(at("outputs/%s", rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void
setup(void)
{
	char why[ERR_LEN];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	memset(&place, 0, sizeof(place));
	place.cwd = dir;
	ck_assert_msg(outputs_make(&place, why, sizeof(why)) == 0, "%s", why);
	ck_assert_msg(outputs_make(&place, why, sizeof(why)) == 0, "again: %s", why);
}

static void
teardown(void)
{
	fs_remove_tree(dir);
	strcpy(dir, "/tmp/test_outputs.XXXXXX");
}

START_TEST(list_and_changes)
{
	struct ipc_files f;
	struct outputs_snap snap = {0};
	struct ipc_result r;

	put("b.csv", "x,y\n", 4);
	put("fig", "\x89PNG\r\n\x1a\nrest", 12);
	ck_assert_int_eq(mkdir(at("outputs/sub"), 0755), 0);
	put("sub/a.txt", "a", 1);
	ck_assert_int_eq(symlink("/etc/passwd", at("outputs/link")), 0);
	ck_assert_int_eq(mkfifo(at("outputs/fifo"), 0600), 0);

	outputs_list(&place, &f);
	ck_assert_uint_eq(f.n_files, 3);
	ck_assert_str_eq(f.files[0].name, "b.csv");
	ck_assert_str_eq(f.files[0].mime_type, "text/csv");
	ck_assert_str_eq(f.files[1].name, "fig");
	ck_assert_str_eq(f.files[1].mime_type, "image/png"); /* by its magic, no extension */
	ck_assert_uint_eq(f.files[1].size_bytes, 12);
	ck_assert_str_eq(f.files[2].name, "sub/a.txt");
	ck_assert_int_eq(f.truncated, 0);
	ck_assert_int_eq(f.files[0].modified_at[strlen(f.files[0].modified_at) - 1], 'Z');
	ipc_files_free(&f);

	outputs_snap_take(&place, &snap);
	put("new.json", "{}", 2);
	put("b.csv", "x,y\n1,2\n", 8);
	memset(&r, 0, sizeof(r));
	outputs_changed(&place, &snap, &r);
	ck_assert_uint_eq(r.n_artifacts, 2);
	ck_assert_str_eq(r.artifacts[0].name, "b.csv");
	ck_assert_uint_eq(r.artifacts[0].size_bytes, 8);
	ck_assert_str_eq(r.artifacts[1].name, "new.json");
	ck_assert_str_eq(r.artifacts[1].mime_type, "application/json");
	ipc_result_free(&r);
	outputs_snap_free(&snap);

	/* No snapshot, no artifacts. */
	memset(&r, 0, sizeof(r));
	outputs_changed(&place, &snap, &r);
	ck_assert_uint_eq(r.n_artifacts, 0);
}
END_TEST

/* A directory of many entries that are no files is cut, and says so. */
START_TEST(walk_is_bounded)
{
	struct ipc_files f;

	for (int i = 0; i < OUTPUTS_VISIT_MAX + 10; i++) {
		ck_assert_int_eq(symlink("x", at("outputs/l%d", i)), 0);
	}
	put("zz.txt", "z", 1);
	outputs_list(&place, &f);
	ck_assert_int_eq(f.truncated, 1);
	ck_assert_uint_le(f.n_files, 1);
	ipc_files_free(&f);
}
END_TEST

START_TEST(open_refuses)
{
	struct ipc_artifact a = {0};
	char why[ERR_LEN];

	put("ok.pdf", "%PDF-1.4", 8);
	int s = open(at("secret"), O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(s, 0);
	close(s);
	ck_assert_int_eq(symlink("../secret", at("outputs/link")), 0);
	ck_assert_int_eq(symlink("..", at("outputs/up")), 0);
	ck_assert_int_eq(mkfifo(at("outputs/fifo"), 0600), 0);
	ck_assert_int_eq(mkdir(at("outputs/d"), 0755), 0);

	int fd = outputs_open(&place, "ok.pdf", &a, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_str_eq(a.mime_type, "application/pdf");
	ck_assert_uint_eq(a.size_bytes, 8);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	free(a.name);
	free(a.mime_type);
	free(a.modified_at);

	static const struct {
		const char *path, *why;
	} refused[] = {
		{"../secret", "not a relative path"}, {"/etc/passwd", "not a relative path"},
		{"d/../ok.pdf", "not a relative path"}, {"", "not a relative path"},
		{"link", "symbolic link"},		{"up/secret", "not below a directory"},
		{"fifo", "not a regular file"},		{"d", "not a regular file"},
		{"missing", "does not exist"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		memset(&a, 0, sizeof(a));
		ck_assert_msg(outputs_open(&place, refused[i].path, &a, why, sizeof(why)) == -1,
			      "%s was opened", refused[i].path);
		ck_assert_msg(strstr(why, refused[i].why) != NULL, "%s: %s", refused[i].path, why);
		ck_assert_ptr_null(a.name);
	}
	if (geteuid() == 0) {
		ck_assert_int_eq(mknod(at("outputs/null"), S_IFCHR | 0600, makedev(1, 3)), 0);
		ck_assert_int_eq(outputs_open(&place, "null", &a, why, sizeof(why)), -1);
		ck_assert_msg(strstr(why, "not a regular file") != NULL, "%s", why);
	}
}
END_TEST

/* Free what outputs_write filled. */
static void
artifact_clear(struct ipc_artifact *a)
{
	free(a->name);
	free(a->mime_type);
	free(a->modified_at);
	memset(a, 0, sizeof(*a));
}

START_TEST(write_replaces_and_refuses)
{
	struct ipc_artifact a = {0};
	char why[ERR_LEN], buf[16] = "";
	struct stat st;

	ck_assert_msg(outputs_write(&place, "outputs/in.csv", "a,b\n", 4, 04755, &a, why,
				    sizeof(why)) == 0, "%s", why);
	ck_assert_str_eq(a.name, "outputs/in.csv");
	ck_assert_uint_eq(a.size_bytes, 4);
	artifact_clear(&a);
	char *p = xasprintf("%s/outputs/in.csv", dir);
	int old = open(p, O_RDONLY);
	ck_assert_int_ge(old, 0);
	ck_assert_msg(outputs_write(&place, "outputs/in.csv", "new", 3, 0777, &a, why,
				    sizeof(why)) == 0, "%s", why);
	artifact_clear(&a);
	ck_assert_int_eq(read(old, buf, sizeof(buf)), 4); /* the old file, whole */
	close(old);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0755);
	ck_assert_int_eq(st.st_size, 3);
	free(p);
	/* No ".in.csv.upload-*" is left. */
	struct ipc_files f;
	outputs_list(&place, &f);
	ck_assert_uint_eq(f.n_files, 1);
	ipc_files_free(&f);

	place.max_bytes = 2;
	ck_assert_int_eq(outputs_write(&place, "big", "abc", 3, 0644, &a, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "exceed the session's file size limit of 2 bytes") != NULL, "%s",
		      why);
	place.max_bytes = 0;
	ck_assert_int_eq(access(at("big"), F_OK), -1);

	ck_assert_int_eq(symlink("outputs/in.csv", at("link")), 0);
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	static const struct {
		const char *path, *why;
	} refused[] = {
		{"../x", "not a relative path"}, {"/tmp/x", "not a relative path"},
		{"link", "symbolic link"},	 {"link/x", "not below a directory"},
		{"fifo", "not a regular file"},	 {"outputs", "not a regular file"},
		{"nodir/x", "does not exist"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_msg(outputs_write(&place, refused[i].path, "x", 1, 0644, &a, why,
					    sizeof(why)) == -1, "%s was written", refused[i].path);
		ck_assert_msg(strstr(why, refused[i].why) != NULL, "%s: %s", refused[i].path, why);
		ck_assert_ptr_null(a.name);
	}
	if (geteuid() == 0) {
		ck_assert_int_eq(mknod(at("null"), S_IFCHR | 0600, makedev(1, 3)), 0);
		ck_assert_int_eq(outputs_write(&place, "null", "x", 1, 0644, &a, why, sizeof(why)),
				 -1);
		ck_assert_msg(strstr(why, "not a regular file") != NULL, "%s", why);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("outputs");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, list_and_changes);
	tcase_add_test(tc, open_refuses);
	tcase_add_test(tc, walk_is_bounded);
	tcase_add_test(tc, write_replaces_and_refuses);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
