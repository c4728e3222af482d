/* fs_tree.c - see fs_tree.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_tree.h"

/* Remove every entry of the open directory d; errno of the first failure in *err. */
static void
remove_entries(DIR *d, int *err)
{
	struct dirent *e;

	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    fs_remove_tree_at(dirfd(d), e->d_name) == -1 && *err == 0)
			*err = errno;
}

/* Open name under parent as a directory, never through a link; -1 if it is none. */
static int
open_dir_at(int parent, const char *name)
{
	return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int
fs_remove_tree_at(int parent, const char *name)
{
	int err = 0;
	int fd = open_dir_at(parent, name);

	/* Mode 0 on a directory stops its owner too, until the owner changes it. */
	if (fd == -1 && errno == EACCES && fchmodat(parent, name, 0700, 0) == 0)
		fd = open_dir_at(parent, name);
	if (fd != -1) {
		DIR *d = fdopendir(fd);
		if (d) {
			remove_entries(d, &err);
			closedir(d);
		} else {
			err = errno;
			close(fd);
		}
		if (unlinkat(parent, name, AT_REMOVEDIR) == -1 && errno != ENOENT && err == 0)
			err = errno;
	} else if (unlinkat(parent, name, 0) == -1 && errno != ENOENT) {
		err = errno;
	}
	if (err == 0)
		return 0;
	errno = err;
	return -1;
}

int
fs_remove_tree(const char *path)
{
	return fs_remove_tree_at(AT_FDCWD, path);
}

int
fs_empty_dir(const char *dir)
{
	int err = 0;
	int fd = open_dir_at(AT_FDCWD, dir);
	DIR *d = fd == -1 ? NULL : fdopendir(fd);

	if (d == NULL) {
		err = errno;
		if (fd != -1)
			close(fd);
		errno = err;
		return -1;
	}
	remove_entries(d, &err);
	closedir(d);
	if (err == 0)
		return 0;
	errno = err;
	return -1;
}
