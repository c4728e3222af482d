/* fuzz_main.c - replay corpus files through a harness without libFuzzer. */
#include "autoconf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "fuzz.h"

/* Feed one file to the harness. Returns 0, or -1 if it cannot be read. */
static int
replay_file(const char *path)
{
	struct buf b;
	char chunk[8192];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (f == NULL) {
		perror(path);
		return -1;
	}
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
	buf_free(&b);
	return 0;
}

/* Replay every regular file of `dir`. Returns how many. */
static int
replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int count = 0;

	if (d == NULL) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (replay_file(path) == 0)
			count++;
	}
	closedir(d);
	return count;
}

int
main(int argc, char **argv)
{
	int total = 0;
	struct stat st;

	for (int i = 1; i < argc; i++) {
		int n = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
								      : (replay_file(argv[i]) == 0);
		if (n < 0)
			return 1;
		total += n;
	}
	printf("%s: %d inputs replayed without a crash\n", argv[0], total);
	return total > 0 ? 0 : 1;
}
