/* fsutil.c - see fsutil.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "fsutil.h"
#include "xmalloc.h"

int
fs_mkdir_p(const char *dir, mode_t mode, char *why, size_t why_len)
{
	char *p = xstrdup(dir);
	int rc = 0;

	for (char *s = p + 1; *s && rc == 0; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST) {
			snprintf(why, why_len, "mkdir %s: %s", p, strerror(errno));
			rc = -1;
		}
		*s = '/';
	}
	if (rc == 0 && mkdir(p, mode) == -1 && errno != EEXIST) {
		snprintf(why, why_len, "mkdir %s: %s", p, strerror(errno));
		rc = -1;
	}
	free(p);
	return rc;
}

int
fs_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	int rc = fsync(fd);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

const char *
fs_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

char *
fs_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

int
fs_exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int ok = access(p, F_OK) == 0;
	free(p);
	return ok;
}
