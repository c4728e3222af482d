/*
 * forkcopy.c - how long the parent's copy of a session directory for a
 * fork (fs_copy_tree, issue 29 item 7) holds its loop: a tree of N empty
 * files, and one file of M MB, each copied 3 times into a fresh directory
 * on the same file system. Not installed, not in make check.
 *
 * Build and run from the build tree (bench/README.md):
 *   cc -O2 -Icommon -I. bench/forkcopy.c common/libcommon.a -o bench/forkcopy
 *   bench/forkcopy DIR [N [M]]   (DIR: an empty scratch directory;
 *                                 default N 100000, M 1024)
 */
#include "autoconf.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fs_copy.h"
#include "fs_tree.h"
#include "xmalloc.h"

/* Copy src into a new DIR/NAME three times; print each time. */
static void
time_copies(const char *top, const char *what, int src, long max_entries)
{
	for (int i = 0; i < 3; i++) {
		char *path = xasprintf("%s/copy", top);
		struct fs_copy_stats st;
		if (mkdir(path, 0700) == -1) {
			perror(path);
			exit(1);
		}
		int dst = open(path, O_RDONLY | O_DIRECTORY);
		double t0 = clock_mono();
		int rc = fs_copy_tree(src, dst, (uid_t)-1, (uid_t)-1, (gid_t)-1, 1LL << 40,
				      max_entries, &st);
		double took = clock_mono() - t0;
		printf("%s: copy %d: %s, %ld files, %lld bytes in %.3f s\n", what, i + 1,
		       rc == 0 ? "ok" : "failed", st.files, st.bytes, took);
		close(dst);
		fs_remove_tree(path);
		free(path);
	}
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: forkcopy DIR [N [M]]\n");
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 100000;
	long mb = argc > 3 ? atol(argv[3]) : 1024;
	char *many = xasprintf("%s/many", argv[1]), *big = xasprintf("%s/big", argv[1]);

	if (mkdir(many, 0700) == -1 || mkdir(big, 0700) == -1) {
		perror(argv[1]);
		return 1;
	}
	int src = open(many, O_RDONLY | O_DIRECTORY);
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%ld", i);
		close(openat(src, name, O_WRONLY | O_CREAT, 0600));
	}
	time_copies(argv[1], "empty files", src, n + 1);
	close(src);
	fs_remove_tree(many);

	src = open(big, O_RDONLY | O_DIRECTORY);
	int fd = openat(src, "data", O_WRONLY | O_CREAT, 0600);
	char *buf = xmalloc(1 << 20);
	memset(buf, 'x', 1 << 20);
	for (long i = 0; i < mb; i++)
		if (write(fd, buf, 1 << 20) != 1 << 20) {
			perror("write");
			return 1;
		}
	close(fd);
	free(buf);
	time_copies(argv[1], "one big file", src, 10);
	close(src);
	fs_remove_tree(big);
	free(many);
	free(big);
	return 0;
}
