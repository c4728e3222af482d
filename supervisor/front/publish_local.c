/*
 * publish_local.c - the local publisher (seed 000's LocalFilePublisher):
 * the file is copied under base_dir, at its prefix and name, through a
 * temporary file renamed into place, so a reader never sees half a file.
 * Directories below base_dir are made 0750 and walked without following
 * links; base_dir itself is made 0750 if missing, owned by the daemon's
 * user.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "hex.h"
#include "publish.h"
#include "rand.h"
#include "uri.h"
#include "xmalloc.h"

/* "file://" and the absolute path, each part percent-encoded. Caller frees. */
static char *
file_uri(const char *base, const char *rel)
{
	struct buf b;
	char *path = xasprintf("%s/%s", base, rel);

	buf_init(&b);
	buf_adds(&b, "file://");
	uri_add_path(&b, path);
	free(path);
	return buf_release(&b);
}

/* mkdir -p of the absolute base_dir (the administrator's path). */
static int
make_base(const char *dir, char *why, size_t why_len)
{
	char *p = xstrdup(dir);

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0750) == -1 && errno != EEXIST) {
			err_set(why, why_len, "mkdir %s: %s", p, strerror(errno));
			free(p);
			return -1;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return 0;
}

static int
publish_local_check(const struct config_publisher *p, char *why, size_t why_len)
{
	char *d = xstrdup(p->base_dir);
	struct stat st;

	/* The nearest part that exists: make_base creates the rest. */
	int r;
	while ((r = stat(d, &st)) == -1 && errno == ENOENT && strcmp(d, "/") != 0) {
		char *slash = strrchr(d, '/');
		slash[slash == d] = '\0';
	}
	int rc = 0;
	if (r == -1)
		rc = err_set(why, why_len, "base_dir %s: stat %s: %s", p->base_dir, d,
			     strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = err_set(why, why_len, "base_dir %s: %s is not a directory", p->base_dir, d);
	free(d);
	return rc;
}

/*
 * Walk (making them) the directories of `rel` below base_dir, leaving its
 * last component in *leaf. The directory's descriptor, or -1 with why.
 */
static int
open_parent(const char *base, char *rel, char **leaf, char *why, size_t why_len)
{
	int dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1)
		return err_set(why, why_len, "open %s: %s", base, strerror(errno));
	char *comp = rel, *slash;
	while ((slash = strchr(comp, '/')) != NULL) {
		*slash = '\0';
		if (mkdirat(dfd, comp, 0750) == -1 && errno != EEXIST) {
			err_set(why, why_len, "mkdir %s/%s: %s", base, rel, strerror(errno));
			close(dfd);
			return -1;
		}
		int sub = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(dfd);
		if (sub == -1) {
			err_set(why, why_len, "open %s/%s: %s", base, rel, strerror(saved));
			return -1;
		}
		*slash = '/';
		dfd = sub;
		comp = slash + 1;
	}
	*leaf = comp;
	return dfd;
}

/* Copy at most `max` bytes of `in` to `out`, hashing them. Bytes copied, or -1 with why. */
static long long
copy_hash(int in, int out, uint64_t max, unsigned char md[32], char *why, size_t why_len)
{
	char *chunk = xmalloc(65536);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint64_t total = 0;
	ssize_t n;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while ((n = pread(in, chunk, 65536, (off_t)total)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_set(why, why_len, "read: %s", strerror(errno));
			goto fail;
		}
		if (total + (uint64_t)n > max) {
			err_set(why, why_len, "the file grew beyond max_bytes (%llu) while it was "
					      "copied", (unsigned long long)max);
			goto fail;
		}
		EVP_DigestUpdate(ctx, chunk, (size_t)n);
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, chunk + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				err_set(why, why_len, "write: %s", strerror(errno));
				goto fail;
			}
			off += w;
		}
		total += (uint64_t)n;
	}
	EVP_DigestFinal_ex(ctx, md, NULL);
	EVP_MD_CTX_free(ctx);
	free(chunk);
	return (long long)total;
fail:
	EVP_MD_CTX_free(ctx);
	free(chunk);
	return -1;
}

static int
publish_local(const struct config_publisher *p, const struct publish_src *src,
	      struct publish_out *out, char *why, size_t why_len)
{
	unsigned char md[32];
	char rnd[17], err[ERR_LEN];
	char *leaf = NULL;
	uint64_t size;

	if (publish_check(p, src, &size, why, why_len) == -1 ||
	    make_base(p->base_dir, why, why_len) == -1)
		return -1;
	char *rel = publish_path(p, src);
	int dfd = open_parent(p->base_dir, rel, &leaf, why, why_len);
	if (dfd == -1) {
		free(rel);
		return -1;
	}
	rand_hex(rnd, 8);
	char *tmp = xasprintf(".%s.%s.tmp", leaf, rnd);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	long long n = -1;
	if (fd == -1)
		err_set(err, sizeof(err), "create: %s", strerror(errno));
	else
		n = copy_hash(src->fd, fd, (uint64_t)p->max_bytes, md, err, sizeof(err));
	if (fd != -1 && n >= 0 && fsync(fd) == -1) {
		err_set(err, sizeof(err), "fsync: %s", strerror(errno));
		n = -1;
	}
	if (fd != -1 && close(fd) == -1 && n >= 0) {
		err_set(err, sizeof(err), "close: %s", strerror(errno));
		n = -1;
	}
	if (n >= 0 && renameat(dfd, tmp, dfd, leaf) == -1) {
		err_set(err, sizeof(err), "rename into place: %s", strerror(errno));
		n = -1;
	}
	if (n < 0) {
		if (fd != -1)
			unlinkat(dfd, tmp, 0);
		err_set(why, why_len, "%s/%s: %s", p->base_dir, rel, err);
	} else {
		out->size = (uint64_t)n;
		hex_encode(out->sha256, md, 32);
		out->uri = file_uri(p->base_dir, rel);
	}
	close(dfd);
	free(tmp);
	free(rel);
	return n < 0 ? -1 : 0;
}

const struct publish_backend publish_backend_local = {
	.type = "local",
	.check = publish_local_check,
	.publish = publish_local,
};
