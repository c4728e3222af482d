/* secret_file.c - see secret_file.h. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "secret_file.h"
#include "xmalloc.h"

struct secret {
	char *key;  /* the configuration key, for messages */
	char *path;
	int src;    /* the parent's descriptor of the file itself; -1 in the front */
	int copy;   /* the memfd of its contents */
	struct secret_deny deny;
	int parent_only; /* never sent to a front (egress.inject's, for the proxy) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct secret *table;
static size_t count;

static struct secret *
find(const char *path)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(table[i].path, path) == 0)
			return &table[i];
	return NULL;
}

/* Why the open file `fd` may not hold a secret: 0, or -1 with why. */
static int
check_fd(const char *key, const char *path, int fd, const struct secret_deny *deny, char *why,
	 size_t why_len)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return err_set(why, why_len, "%s %s: fstat: %s", key, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return err_set(why, why_len, "%s %s: not a regular file", key, path);
	if ((st.st_mode & 077) != 0)
		return err_set(why, why_len, "%s %s: mode %04o lets its group or others read or "
			       "write it; chmod 600 %s", key, path, (unsigned)(st.st_mode & 07777),
			       path);
	if (st.st_uid >= deny->first && st.st_uid <= deny->last)
		return err_set(why, why_len, "%s %s: owned by %s (uid %u), an identity kernels "
			       "run as, so a kernel could read it; chown root %s", key, path,
			       deny->account ? deny->account : "a kernel_uid_range identity",
			       (unsigned)st.st_uid, path);
	if (st.st_size > SECRET_FILE_MAX)
		return err_set(why, why_len, "%s %s: larger than 1 MiB", key, path);
	return 0;
}

/* Read `src` from its start into b[cap], up to cap bytes: the length, or -1. */
static ssize_t
read_all(int src, char *b, size_t cap)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = pread(src, b + got, cap - got, (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* A sealed memfd holding what `src` holds now: the memfd, or -1 with why. */
static int
copy_of(const char *key, const char *path, int src, char *why, size_t why_len)
{
	char *b = xmalloc(SECRET_FILE_MAX + 1);
	ssize_t n = read_all(src, b, SECRET_FILE_MAX + 1);
	int fd = -1;

	if (n == -1)
		err_set(why, why_len, "%s %s: read: %s", key, path, strerror(errno));
	else if (n > SECRET_FILE_MAX)
		err_set(why, why_len, "%s %s: larger than 1 MiB", key, path);
	else if ((fd = memfd_create("codeexecd-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1)
		err_set(why, why_len, "%s %s: memfd_create: %s", key, path, strerror(errno));
	else if (write(fd, b, (size_t)n) != n ||
		 fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
			 == -1) {
		err_set(why, why_len, "%s %s: copy into a memfd: %s", key, path, strerror(errno));
		close(fd);
		fd = -1;
	}
	explicit_bzero(b, n > 0 ? (size_t)n : 0);
	free(b);
	return fd;
}

static void
add(const char *key, const char *path, int src, int copy, const struct secret_deny *deny)
{
	table = xreallocarray(table, count + 1, sizeof(*table));
	table[count++] = (struct secret){xstrdup(key), xstrdup(path), src, copy, *deny, 0};
}

int
secret_file_open_parent(const char *key, const char *path, const struct secret_deny *deny,
			char *why, size_t why_len)
{
	pthread_mutex_lock(&lock);
	int known = find(path) != NULL;
	pthread_mutex_unlock(&lock);
	if (known || secret_file_open(key, path, deny, why, why_len) == -1)
		return known ? 0 : -1;
	pthread_mutex_lock(&lock);
	find(path)->parent_only = 1;
	pthread_mutex_unlock(&lock);
	return 0;
}

int
secret_file_parent_only(size_t i)
{
	pthread_mutex_lock(&lock);
	int p = i < count && table[i].parent_only;
	pthread_mutex_unlock(&lock);
	return p;
}

int
secret_file_open(const char *key, const char *path, const struct secret_deny *deny,
		 char *why, size_t why_len)
{
	int rc = -1, copy = -1;

	pthread_mutex_lock(&lock);
	if (find(path) != NULL) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	int src = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	if (src == -1)
		err_set(why, why_len, "%s %s: %s", key, path, strerror(errno));
	else if (check_fd(key, path, src, deny, why, why_len) == 0 &&
		 (copy = copy_of(key, path, src, why, why_len)) != -1)
		rc = 0;
	if (rc == 0)
		add(key, path, src, copy, deny);
	else if (src != -1)
		close(src);
	pthread_mutex_unlock(&lock);
	return rc;
}

/*
 * Hold the file `s`'s path names now, if this process may still open it
 * (a parent that kept CAP_DAC_OVERRIDE, or a file its user may read);
 * else keep the one opened at start-up, and say so if the path now names
 * another file, as a rename over it does.
 */
static void
reopen(struct secret *s)
{
	struct stat now, held;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);

	int saved = errno;

	if (fd != -1) {
		close(s->src);
		s->src = fd;
		return;
	}
	if (stat(s->path, &now) == 0 && fstat(s->src, &held) == 0 &&
	    (now.st_dev != held.st_dev || now.st_ino != held.st_ino))
		log_warnx("%s %s was replaced by another file, which the daemon may no longer "
			  "open (%s): it rereads the file it opened at start-up; edit the file in "
			  "place, or restart to open the new one",
			  s->key, s->path, strerror(saved));
}

void
secret_file_reread(void)
{
	char why[ERR_LEN];

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < count; i++) {
		struct secret *s = &table[i];
		int copy = -1;
		reopen(s);
		if (check_fd(s->key, s->path, s->src, &s->deny, why, sizeof(why)) == -1 ||
		    (copy = copy_of(s->key, s->path, s->src, why, sizeof(why))) == -1) {
			log_warnx("%s; the copy read before stays in use", why);
			continue;
		}
		close(s->copy);
		s->copy = copy;
	}
	pthread_mutex_unlock(&lock);
}

size_t
secret_file_count(void)
{
	return count;
}

const char *
secret_file_path(size_t i)
{
	return table[i].path;
}

int
secret_file_fd(size_t i)
{
	return table[i].copy;
}

void
secret_file_put(const char *path, int fd)
{
	static const struct secret_deny nobody = {1, 0, NULL};

	pthread_mutex_lock(&lock);
	struct secret *s = find(path);
	if (s != NULL) {
		close(s->copy);
		s->copy = fd;
	} else {
		add("", path, -1, fd, &nobody);
	}
	pthread_mutex_unlock(&lock);
}

void
secret_file_forget(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < count; i++) {
		free(table[i].key);
		free(table[i].path);
	}
	free(table);
	table = NULL;
	count = 0;
	pthread_mutex_unlock(&lock);
}

/* The whole memfd `fd`, NUL-terminated, or NULL with errno. */
static char *
slurp(int fd, size_t *len)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return NULL;
	char *text = xmalloc((size_t)st.st_size + 1);
	ssize_t n = read_all(fd, text, (size_t)st.st_size);
	if (n != st.st_size) {
		explicit_bzero(text, (size_t)st.st_size);
		free(text);
		errno = n == -1 ? errno : EIO;
		return NULL;
	}
	text[n] = '\0';
	*len = (size_t)n;
	return text;
}

char *
secret_file_read(const char *key, const char *path, size_t *len, char *why, size_t why_len)
{
	size_t n = 0;
	char *text = NULL;

	pthread_mutex_lock(&lock);
	struct secret *s = find(path);
	if (s == NULL)
		err_set(why, why_len, "%s %s: not opened by the daemon at start-up (a secret file "
			"named by a reload takes a restart)", key, path);
	else if ((text = slurp(s->copy, &n)) == NULL)
		err_set(why, why_len, "%s %s: read the daemon's copy: %s", key, path,
			strerror(errno));
	pthread_mutex_unlock(&lock);
	if (text != NULL && len != NULL)
		*len = n;
	return text;
}

char *
secret_file_line(const char *key, const char *path, char *why, size_t why_len)
{
	size_t n;
	char *b = secret_file_read(key, path, &n, why, why_len);

	if (b == NULL)
		return NULL;
	b[strcspn(b, "\r\n")] = '\0';
	char *s = b;
	while (isspace((unsigned char)*s))
		s++;
	for (char *e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	char *line = s[0] ? xstrdup(s) : NULL;
	if (line == NULL)
		err_set(why, why_len, "%s %s: empty", key, path);
	explicit_bzero(b, n);
	free(b);
	return line;
}
