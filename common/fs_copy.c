/* fs_copy.c - see fs_copy.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_copy.h"
#include "xmalloc.h"

#define CHUNK (64 * 1024)

struct copy {
	uid_t owner; /* of the source tree: entries of another are skipped */
	uid_t uid;
	gid_t gid;
	long long max;
	long max_entries;
	struct fs_copy_stats *st;
	char *buf; /* CHUNK bytes: not TLS, which comes off every thread's stack */
};

static int copy_dir(struct copy *c, int src, int dst, int depth);

/* Give the new entry `fd` to the copy's owner. 0, or -1 with errno. */
static int
own(const struct copy *c, int fd)
{
	if (c->uid == (uid_t)-1)
		return 0;
	return fchown(fd, c->uid, c->gid);
}

/* Whether the open source entry `sb` is the tree owner's (a hard link to
 * another's file, which the privileged copier could read, is not). */
static int
owners(const struct copy *c, const struct stat *sb)
{
	return c->owner == (uid_t)-1 || sb->st_uid == c->owner;
}

/* Write n bytes of buf to fd. 0, or -1 with errno. */
static int
write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copy the contents of in (a regular file) into out, within the cap. */
static int
copy_bytes(struct copy *c, int in, int out)
{
	for (;;) {
		ssize_t n = read(in, c->buf, CHUNK);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			return 0;
		if (c->st->bytes + n > c->max) {
			errno = EFBIG;
			return -1;
		}
		if (write_all(out, c->buf, (size_t)n) == -1)
			return -1;
		c->st->bytes += n;
	}
}

/*
 * Open `name` of src for reading if it is a regular file, with *sb; else
 * -1. It is looked at through an O_PATH descriptor first, which opens
 * nothing: a device or FIFO put in its place since the readdir (a hard
 * link to a device node, say) is never opened, not even without blocking.
 */
static int
open_regular(int src, const char *name, struct stat *sb)
{
	char self[32];
	int p = openat(src, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (p == -1)
		return -1;
	if (fstat(p, sb) == -1 || !S_ISREG(sb->st_mode)) {
		close(p);
		return -1;
	}
	/* The same inode, now opened for reading. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
	int fd = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	close(p);
	return fd;
}

/* Copy regular file `name` of src into dst; skipped if it is none by now. */
static int
copy_file(struct copy *c, int src, int dst, const char *name)
{
	struct stat sb;
	int in = open_regular(src, name, &sb);

	if (in == -1 || !owners(c, &sb)) {
		if (in != -1)
			close(in);
		c->st->skipped++;
		return 0;
	}
	mode_t mode = (sb.st_mode & 0111) ? 0700 : 0600;
	int out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	int rc = out == -1 || own(c, out) == -1 || fchmod(out, mode) == -1 ||
			 copy_bytes(c, in, out) == -1
		 ? -1
		 : 0;
	int err = errno;
	close(in);
	if (out != -1 && close(out) == -1 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0)
		c->st->files++;
	errno = err;
	return rc;
}

/* Copy directory `name` of src into dst, `depth` below the top. */
static int
copy_subdir(struct copy *c, int src, int dst, const char *name, int depth)
{
	if (depth > FS_COPY_DEPTH_MAX) {
		c->st->skipped++;
		return 0;
	}
	struct stat sb;
	int in = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (in == -1 || fstat(in, &sb) == -1 || !owners(c, &sb)) {
		/* gone, replaced by a link, of mode 0 to us, or another's */
		if (in != -1)
			close(in);
		c->st->skipped++;
		return 0;
	}
	int out = -1, rc = -1;
	if (mkdirat(dst, name, 0700) == 0 &&
	    (out = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1 &&
	    own(c, out) == 0 && fchmod(out, 0700) == 0) {
		c->st->dirs++;
		rc = copy_dir(c, in, out, depth);
	}
	int err = errno;
	close(in);
	if (out != -1)
		close(out);
	errno = err;
	return rc;
}

/* Copy every entry of src into dst. */
static int
copy_dir(struct copy *c, int src, int dst, int depth)
{
	int fd = dup(src);
	DIR *d = fd == -1 ? NULL : fdopendir(fd);
	struct dirent *e;
	struct stat sb;
	int rc = 0;

	if (d == NULL) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	rewinddir(d); /* a dup shares the offset: start from the first entry */
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (c->st->files + c->st->dirs + c->st->skipped >= c->max_entries) {
			errno = EMLINK;
			rc = -1;
			break;
		}
		if (fstatat(src, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			c->st->skipped++; /* gone meanwhile */
		else if (S_ISDIR(sb.st_mode))
			rc = copy_subdir(c, src, dst, e->d_name, depth + 1);
		else if (S_ISREG(sb.st_mode))
			rc = copy_file(c, src, dst, e->d_name);
		else
			c->st->skipped++; /* a link, a device, a FIFO, a socket */
	}
	int err = errno;
	closedir(d);
	errno = err;
	return rc;
}

int
fs_copy_tree(int src, int dst, uid_t owner, uid_t uid, gid_t gid, long long max_bytes,
	     long max_entries, struct fs_copy_stats *st)
{
	struct copy c = {owner, uid, gid, max_bytes, max_entries, st, xmalloc(CHUNK)};

	memset(st, 0, sizeof(*st));
	int rc = copy_dir(&c, src, dst, 0);
	int err = errno;
	free(c.buf);
	errno = err;
	return rc;
}
