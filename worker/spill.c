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

/*
 * Open (creating it if needed) SPILL_DIR under cwd without following a
 * link planted by the kernel. Returns a directory descriptor, or -1 with
 * why[why_len] set.
 */
static int
open_spill_dir(const struct spill_place *place, char *why, size_t why_len)
{
	int cwdfd, dfd, made = 0;

	cwdfd = open(place->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwdfd == -1) {
		err_set(why, why_len, "open %s: %s", place->cwd, strerror(errno));
		return -1;
	}
	if (mkdirat(cwdfd, SPILL_DIR, 0700) == 0)
		made = 1;
	else if (errno != EEXIST) {
		err_set(why, why_len, "mkdir %s/%s: %s", place->cwd, SPILL_DIR, strerror(errno));
		close(cwdfd);
		return -1;
	}
	dfd = openat(cwdfd, SPILL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int saved = errno;
	close(cwdfd);
	if (dfd == -1) {
		err_set(why, why_len, "open %s/%s: %s", place->cwd, SPILL_DIR, strerror(saved));
		return -1;
	}
	if (made && place->chown && fchown(dfd, place->uid, place->gid) == -1) {
		err_set(why, why_len, "chown %s/%s: %s", place->cwd, SPILL_DIR, strerror(errno));
		close(dfd);
		return -1;
	}
	return dfd;
}

int
spill_create(const struct spill_place *place, unsigned request, const char *what,
	     const char *ext, char **rel, char *why, size_t why_len)
{
	char rnd[9];
	int dfd = open_spill_dir(place, why, why_len);

	if (dfd == -1)
		return -1;
	rand_hex(rnd, 4);
	char *name = xasprintf("%u-%s-%s%s", request, rnd, what, ext);
	/* O_EXCL|O_NOFOLLOW: never an existing file, never through a link. */
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1) {
		err_set(why, why_len, "create %s/%s/%s: %s", place->cwd, SPILL_DIR, name,
			strerror(errno));
	} else if (place->chown && fchown(fd, place->uid, place->gid) == -1) {
		err_set(why, why_len, "chown %s/%s/%s: %s", place->cwd, SPILL_DIR, name,
			strerror(errno));
		unlinkat(dfd, name, 0);
		close(fd);
		fd = -1;
	} else {
		*rel = xasprintf("%s/%s", SPILL_DIR, name);
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
spill_save(const struct spill_place *place, unsigned request, const char *what,
	   const char *ext, const void *data, size_t len, char **rel, char *why,
	   size_t why_len)
{
	off_t written = 0;
	int fd = spill_create(place, request, what, ext, rel, why, why_len);

	if (fd == -1)
		return -1;
	int rc = spill_write(place, fd, &written, data, len);
	if (rc == -1 || close(fd) == -1) {
		err_set(why, why_len, "write %s/%s: %s", place->cwd, *rel, strerror(errno));
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
