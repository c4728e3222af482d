/* cgroup_fs.c - see cgroup_fs.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_fs.h"
#include "xmalloc.h"

int
cgroup_fs_write(const char *dir, const char *file, const char *s)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC), rc = -1;

	free(p);
	if (fd == -1)
		return -1;
	size_t len = strlen(s);
	if (write(fd, s, len) == (ssize_t)len)
		rc = 0;
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
cgroup_fs_read(const char *dir, const char *file, char *out, size_t size)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	if (fd == -1)
		return -1;
	ssize_t n = read(fd, out, size - 1);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	out[n] = '\0';
	return 0;
}

int
cgroup_fs_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	       n;
}
