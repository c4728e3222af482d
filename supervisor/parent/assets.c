/* assets.c - see assets.h. */
#include "autoconf.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "assets.h"
#include "config.h"
#include "curl_req.h"
#include "err.h"
#include "fsutil.h"
#include "hex.h"
#include "log.h"
#include "rand.h"
#include "xmalloc.h"

#define MIB (1024ULL * 1024ULL)
#define CONNECT_TIMEOUT_S 30
#define MAX_REDIRECTS 5

/* Where fetched bytes go: the temporary file (-1: none) and the running digest. */
struct sink {
	int fd;
	EVP_MD_CTX *md;
	uint64_t total;
	uint64_t cap;
	int too_big;
	int write_errno;
};

/* One asset being provisioned. */
struct asset_job {
	const struct config *cfg;
	const struct config_asset *a;
	int dirfd;		/* the destination's directory */
	const char *leaf;	/* the destination's file name in it */
	char *why;		/* the caller's reason buffer */
	size_t why_len;
};

static int
fail(struct asset_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Set why to "asset NAME: ..."; always returns -1. */
static int
fail(struct asset_job *j, const char *fmt, ...)
{
	va_list ap;
	int off = snprintf(j->why, j->why_len, "asset %s: ", j->a->name);

	if (off >= 0 && (size_t)off < j->why_len) {
		va_start(ap, fmt);
		vsnprintf(j->why + off, j->why_len - (size_t)off, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Add bytes to the file and the digest; 0, or -1 when the cap or a write fails. */
static int
sink_add(struct sink *s, const void *data, size_t len)
{
	const char *p = data;

	if (s->total + len > s->cap) {
		s->too_big = 1;
		return -1;
	}
	EVP_DigestUpdate(s->md, data, len);
	s->total += len;
	while (s->fd != -1 && len > 0) {
		ssize_t n = write(s->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			s->write_errno = errno;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The hex SHA-256 of what went into `s`. */
static void
sink_hex(struct sink *s, char hex[65])
{
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(s->md, sum, &n);
	hex_encode(hex, sum, n < 32 ? n : 32);
}

/* The configured checksum as 64 lower-case hex digits. */
static void
expected_hex(const struct config_asset *a, char hex[65])
{
	const char *s = strncmp(a->checksum, "sha256:", 7) == 0 ? a->checksum + 7 : a->checksum;

	for (int i = 0; i < 64; i++)
		hex[i] = (char)tolower((unsigned char)s[i]);
	hex[64] = '\0';
}

/* Hash everything `fd` still has to read into `s` (a local source or a present file). */
static int
read_all(int fd, struct sink *s)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		if (sink_add(s, chunk, (size_t)n) == -1)
			return -1;
	}
}

/* Whether the file already at the destination has the expected checksum. */
static int
present_and_valid(struct asset_job *j)
{
	struct sink s = {.fd = -1, .md = EVP_MD_CTX_new(), .cap = UINT64_MAX};
	char have[65], want[65];
	int fd = openat(j->dirfd, j->leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int ok = 0;

	if (fd == -1 || s.md == NULL || EVP_DigestInit_ex(s.md, EVP_sha256(), NULL) != 1)
		goto out;
	if (read_all(fd, &s) == 0) {
		sink_hex(&s, have);
		expected_hex(j->a, want);
		ok = strcmp(have, want) == 0;
		if (!ok)
			log_warnx("asset %s: %s has sha256 %s, not %s: fetching it again",
				  j->a->name, j->a->destination, have, want);
	}
out:
	if (fd != -1)
		close(fd);
	EVP_MD_CTX_free(s.md);
	return ok;
}

/* A file:// URL's path, percent-decoded, or a bare path as it is. Caller owns. */
static char *
local_path(const char *source)
{
	if (strncmp(source, "file://", 7) != 0)
		return xstrdup(source);
	const char *p = source + 7;
	if (strncmp(p, "localhost/", 10) == 0)
		p += 9;
	char *out = xmalloc(strlen(p) + 1), *o = out;
	for (; *p != '\0'; p++) {
		if (p[0] == '%' && isxdigit((unsigned char)p[1]) &&
		    isxdigit((unsigned char)p[2])) {
			char hex[3] = {p[1], p[2], '\0'};
			*o++ = (char)strtol(hex, NULL, 16);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

/* Copy a local file into the sink. */
static int
fetch_local(struct asset_job *j, struct sink *s)
{
	char *path = local_path(j->a->source);
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = -1;

	if (fd == -1)
		fail(j, "open %s: %s", path, strerror(errno));
	else if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		fail(j, "%s is not a regular file", path);
	else if (read_all(fd, s) == -1 && !s->too_big && !s->write_errno)
		fail(j, "read %s: %s", path, strerror(errno));
	else
		rc = 0;
	if (fd != -1)
		close(fd);
	free(path);
	return rc;
}

/* libcurl's write callback: a short count makes it stop the transfer. */
static size_t
curl_write(char *data, size_t size, size_t nmemb, void *arg)
{
	return sink_add(arg, data, size * nmemb) == 0 ? size * nmemb : 0;
}

/*
 * Download an https:// (or loopback http://) source into the sink: TLS
 * verified, at most MAX_REDIRECTS redirects and only to https://, bounded
 * in size and time, never through a proxy for loopback.
 */
static int
fetch_url(struct asset_job *j, struct sink *s)
{
	char err[ERR_LEN];
	int http = strncmp(j->a->source, "http://", 7) == 0;
	struct curl_req req = {
		.url = j->a->source,
		.protocols = http ? "http" : "https",
		.redir_protocols = "https",
		.max_redirs = MAX_REDIRECTS,
		.connect_timeout_s = CONNECT_TIMEOUT_S,
		.timeout_s = j->cfg->asset_timeout_s,
		.no_proxy = http,
		.fail_on_error = 1,
		.max_answer = s->cap,
		.write = curl_write,
		.write_arg = s,
	};
	struct curl_res res;

	if (curl_req_perform(&req, NULL, &res, err, sizeof(err)) == 0)
		return 0;
	if (s->too_big || s->write_errno)
		return -1;
	if (res.too_big) {
		s->too_big = 1;
		return -1;
	}
	return fail(j, "fetch %s: %s", j->a->source, err);
}

/* Refuse to start a download the file system has no room for. */
static int
check_space(struct asset_job *j)
{
	struct statvfs sv;

	if (j->a->size_hint_mb == 0 || fstatvfs(j->dirfd, &sv) == -1)
		return 0;
	uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail < (uint64_t)j->a->size_hint_mb * MIB)
		return fail(j, "needs about %d MiB (size_hint_mb) but %s has only %llu MiB free",
			    j->a->size_hint_mb, j->cfg->asset_cache_dir,
			    (unsigned long long)(avail / MIB));
	return 0;
}

/* Fetch into a temporary file, check, rename into place. */
static int
fetch(struct asset_job *j)
{
	char hex[17], have[65], want[65];
	struct sink s = {.md = EVP_MD_CTX_new(), .cap = (uint64_t)j->cfg->asset_max_mb * MIB};
	int rc = -1;

	rand_hex(hex, 8);
	char *tmp = xasprintf(".%s.part-%s", j->leaf, hex);
	s.fd = openat(j->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (s.fd == -1) {
		fail(j, "create %s/%s: %s", j->cfg->asset_cache_dir, tmp, strerror(errno));
		goto out;
	}
	if (s.md == NULL || EVP_DigestInit_ex(s.md, EVP_sha256(), NULL) != 1)
		fatalx("sha256: cannot initialize a digest");
	log_info("asset %s: fetching %s into %s", j->a->name, j->a->source, j->a->destination);
	int got = strncmp(j->a->source, "http", 4) == 0 ? fetch_url(j, &s) : fetch_local(j, &s);
	if (s.too_big) {
		fail(j, "%s is larger than asset_max_mb (%d MiB): refused", j->a->source,
		     j->cfg->asset_max_mb);
		goto out;
	}
	if (s.write_errno) {
		fail(j, "write %s/%s: %s", j->cfg->asset_cache_dir, tmp, strerror(s.write_errno));
		goto out;
	}
	if (got == -1)
		goto out;
	sink_hex(&s, have);
	expected_hex(j->a, want);
	if (strcmp(have, want) != 0) {
		fail(j, "checksum mismatch: %s has sha256 %s, the configuration says %s; "
			"nothing was installed",
		     j->a->source, have, want);
		goto out;
	}
	if (fsync(s.fd) == -1 || renameat(j->dirfd, tmp, j->dirfd, j->leaf) == -1) {
		fail(j, "install %s: %s", j->a->destination, strerror(errno));
		goto out;
	}
	fsync(j->dirfd);
	log_info("asset %s: installed %s (%llu bytes, sha256 %s)", j->a->name,
		 j->a->destination, (unsigned long long)s.total, have);
	rc = 0;
out:
	if (s.fd != -1) {
		close(s.fd);
		if (rc == -1)
			unlinkat(j->dirfd, tmp, 0);
	}
	EVP_MD_CTX_free(s.md);
	free(tmp);
	return rc;
}

/*
 * Open the directory of the destination under the cache, creating missing
 * parts, refusing any part that is a symbolic link or not a directory.
 * Sets j->dirfd and j->leaf.
 */
static int
open_parent(struct asset_job *j, int cachefd)
{
	const char *dest = j->a->destination;
	int fd = dup(cachefd);

	for (const char *p = dest;;) {
		size_t len = strcspn(p, "/");
		if (p[len] == '\0') {
			j->dirfd = fd;
			j->leaf = p;
			return 0;
		}
		char *part = xstrndup(p, len);
		if (mkdirat(fd, part, 0755) == -1 && errno != EEXIST) {
			fail(j, "mkdir %.*s: %s", (int)(p - dest + len), dest, strerror(errno));
			free(part);
			close(fd);
			return -1;
		}
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		free(part);
		close(fd);
		if (next == -1)
			return fail(j, "destination %s: %.*s %s", dest, (int)(p - dest + len),
				    dest,
				    saved == ELOOP || saved == ENOTDIR
					? "is a symbolic link or not a directory: refused"
					: strerror(saved));
		fd = next;
		p += len + 1;
	}
}

/* The destination's file itself: absent, or a regular file (never a symlink). */
static int
check_leaf(struct asset_job *j)
{
	struct stat st;

	if (fstatat(j->dirfd, j->leaf, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : fail(j, "stat %s: %s", j->a->destination,
						  strerror(errno));
	if (S_ISLNK(st.st_mode))
		return fail(j, "destination %s is a symbolic link: refused", j->a->destination);
	if (!S_ISREG(st.st_mode))
		return fail(j, "destination %s exists and is not a regular file",
			    j->a->destination);
	return 1;
}

/* Whether `dest` would land in the environment (when the cache is its parent). */
static int
inside_env(const struct config *cfg, const char *dest)
{
	char *parent = fs_dirname(cfg->build_dir);
	const char *base = fs_basename(cfg->build_dir);
	size_t blen = strlen(base);
	int in = strcmp(parent, cfg->asset_cache_dir) == 0 && strncmp(dest, base, blen) == 0 &&
		 (dest[blen] == '/' || dest[blen] == '.' || dest[blen] == '\0');

	free(parent);
	return in;
}

/* Provision one asset. */
static int
provision_one(const struct config *cfg, const struct config_asset *a, int cachefd, char *why,
	      size_t why_len)
{
	struct asset_job j = {.cfg = cfg, .a = a, .dirfd = -1, .why = why, .why_len = why_len};
	int rc = -1;

	if (inside_env(cfg, a->destination))
		return fail(&j, "destination %s is inside the environment %s, which a rebuild "
				"replaces: choose another",
			    a->destination, cfg->build_dir);
	if (open_parent(&j, cachefd) == -1)
		return -1;
	int present = check_leaf(&j);
	if (present == 1 && present_and_valid(&j)) {
		log_info("asset %s: %s is present and its checksum matches", a->name,
			 a->destination);
		rc = 0;
	} else if (present != -1 && check_space(&j) == 0) {
		rc = fetch(&j);
	}
	close(j.dirfd);
	return rc;
}

int
assets_provision(const struct config *cfg, int force, char *why, size_t why_len)
{
	if (cfg->assets.n == 0)
		return 0;
	if (!cfg->auto_provision && !force) {
		log_info("auto_provision is false: %zu assets neither fetched nor checked",
			 cfg->assets.n);
		return 0;
	}
	if (fs_mkdir_p(cfg->asset_cache_dir, 0755, why, why_len) == -1)
		return -1;
	int cachefd = open(cfg->asset_cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cachefd == -1) {
		snprintf(why, why_len, "open asset_cache_dir %s: %s", cfg->asset_cache_dir,
			 strerror(errno));
		return -1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("libcurl: global initialization failed");
	/* With CURLOPT_NOSIGNAL, a peer closing a TLS connection must not kill us. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	int rc = 0;
	for (size_t i = 0; i < cfg->assets.n && rc == 0; i++)
		rc = provision_one(cfg, config_asset_at(cfg, i), cachefd, why, why_len);
	sigaction(SIGPIPE, &old, NULL);
	curl_global_cleanup();
	close(cachefd);
	return rc;
}
