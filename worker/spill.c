/* spill.c - see spill.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rand.h"
#include "spill.h"
#include "xmalloc.h"

const struct spill_dir spill_output_dir = {SPILL_DIR, 0700};

/*
 * Open directory `part` (len bytes) below dfd, making it if needed (given
 * to the kernel's identity), without following a link planted by the
 * kernel. Returns its descriptor, or -1 with errno set.
 */
static int
open_part(const struct spill_place *place, int dfd, const char *part, size_t len, int mode)
{
	char name[256];

	if (len == 0 || len >= sizeof(name)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(name, part, len);
	name[len] = '\0';
	int made = mkdirat(dfd, name, (mode_t)mode) == 0;
	if (!made && errno != EEXIST)
		return -1;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd != -1 && made && place->chown && fchown(fd, place->uid, place->gid) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/*
 * Open (creating it if needed) dir under cwd, one part at a time. Returns
 * a directory descriptor, or -1 with why[why_len] set.
 */
static int
open_spill_dir(const struct spill_place *place, const struct spill_dir *dir, char *why,
	       size_t why_len)
{
	int dfd = open(place->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd == -1) {
		err_set(why, why_len, "open %s: %s", place->cwd, strerror(errno));
		return -1;
	}
	for (const char *p = dir->path; *p;) {
		size_t len = strcspn(p, "/");
		int fd = open_part(place, dfd, p, len, dir->mode);
		int saved = errno;
		close(dfd);
		if (fd == -1) {
			err_set(why, why_len, "open %s/%.*s: %s", place->cwd,
				(int)(p - dir->path + len), dir->path, strerror(saved));
			return -1;
		}
		dfd = fd;
		p += len;
		if (*p == '/')
			p++;
	}
	return dfd;
}

int
spill_create(const struct spill_place *place, const struct spill_dir *dir, unsigned request,
	     const char *what, const char *ext, char **rel, char *why, size_t why_len)
{
	char rnd[9];
	int dfd = open_spill_dir(place, dir, why, why_len);

	if (dfd == -1)
		return -1;
	rand_hex(rnd, 4);
	char *name = xasprintf("%u-%s-%s%s", request, rnd, what, ext);
	/* O_EXCL|O_NOFOLLOW: never an existing file, never through a link. */
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1) {
		err_set(why, why_len, "create %s/%s/%s: %s", place->cwd, dir->path, name,
			strerror(errno));
	} else if (place->chown && fchown(fd, place->uid, place->gid) == -1) {
		err_set(why, why_len, "chown %s/%s/%s: %s", place->cwd, dir->path, name,
			strerror(errno));
		unlinkat(dfd, name, 0);
		close(fd);
		fd = -1;
	} else {
		*rel = xasprintf("%s/%s", dir->path, name);
	}
	free(name);
	close(dfd);
	return fd;
}

int
spill_write(const struct spill_place *place, int fd, off_t *written, const void *data,
	    size_t len)
{
	const char *p = data;
	int cut = 0;

	if (place->max_bytes > 0 && *written + (off_t)len > place->max_bytes) {
		len = *written < place->max_bytes ? (size_t)(place->max_bytes - *written) : 0;
		cut = 1;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
		*written += n;
	}
	return cut;
}

int
spill_save(const struct spill_place *place, const struct spill_dir *dir, unsigned request,
	   const char *what, const char *ext, const void *data, size_t len, char **rel,
	   char *why, size_t why_len)
{
	off_t written = 0;
	int fd = spill_create(place, dir, request, what, ext, rel, why, why_len);

	if (fd == -1)
		return -1;
	int rc = spill_write(place, fd, &written, data, len);
	int err = errno;
	/* Closed whatever happened: a full disk must not cost a descriptor a call. */
	if (close(fd) == -1 && rc != -1) {
		rc = -1;
		err = errno;
	}
	if (rc == -1) {
		err_set(why, why_len, "write %s/%s: %s", place->cwd, *rel, strerror(err));
		free(*rel);
		*rel = NULL;
		return -1;
	}
	if (rc == 1) {
		err_set(why, why_len, "%s/%s was cut at %lld bytes by the file size limit",
			place->cwd, *rel, (long long)place->max_bytes);
		free(*rel);
		*rel = NULL;
		return -1;
	}
	return 0;
}
