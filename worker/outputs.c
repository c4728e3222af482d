/* outputs.c - see outputs.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mime.h"
#include "outputs.h"
#include "rand.h"
#include "xmalloc.h"

/* What a walk of outputs/ found. */
struct walk {
	const struct spill_place *place;
	struct found {
		char *name;
		uint64_t size;
		int64_t mtime_ns;
		const char *mime;
	} *f;
	size_t n, cap;
	size_t visited; /* entries looked at, of any kind */
	int truncated;
};

/* outputs/ under place->cwd, opened without following a link; -1 with errno. */
static int
open_outputs(const struct spill_place *place)
{
	int cwdfd = open(place->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwdfd == -1)
		return -1;
	int fd = openat(cwdfd, OUTPUTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int saved = errno;
	close(cwdfd);
	errno = saved;
	return fd;
}

int
outputs_make(const struct spill_place *place, char *why, size_t why_len)
{
	int cwdfd = open(place->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwdfd == -1)
		return err_set(why, why_len, "open %s: %s", place->cwd, strerror(errno));
	int made = mkdirat(cwdfd, OUTPUTS_DIR, 0755) == 0;
	int saved = errno;
	close(cwdfd);
	if (!made && saved != EEXIST)
		return err_set(why, why_len, "mkdir %s/%s: %s", place->cwd, OUTPUTS_DIR,
			       strerror(saved));
	int fd = open_outputs(place);
	if (fd == -1)
		return err_set(why, why_len, "open %s/%s: %s", place->cwd, OUTPUTS_DIR,
			       strerror(errno));
	if (made && place->chown && fchown(fd, place->uid, place->gid) == -1) {
		err_set(why, why_len, "chown %s/%s: %s", place->cwd, OUTPUTS_DIR, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The MIME type of open file fd named `name`: its first bytes, then its name. */
static const char *
type_of(int fd, const char *name)
{
	unsigned char head[MIME_HEAD];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	return mime_guess(name, head, n > 0 ? (size_t)n : 0);
}

/* Whether st may be handed out: a regular file the kernel's identity owns. */
static int
file_ok(const struct spill_place *place, const struct stat *st)
{
	/* A hard link to someone else's file is not the session's output. */
	return S_ISREG(st->st_mode) && (!place->chown || st->st_uid == place->uid);
}

static void
add_found(struct walk *w, const char *name, const struct stat *st, const char *mime)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		w->f = xreallocarray(w->f, w->cap, sizeof(*w->f));
	}
	w->f[w->n].name = xstrdup(name);
	w->f[w->n].size = (uint64_t)st->st_size;
	w->f[w->n].mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	w->f[w->n].mime = mime;
	w->n++;
}

/* Walk directory dfd (consumed), whose entries are named prefix + name. */
static void
walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* Bounded however the kernel fills it: this runs before every call. */
		if (w->n >= IPC_FILES_MAX || ++w->visited > OUTPUTS_VISIT_MAX) {
			w->truncated = 1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		char *name = xasprintf("%s%s", prefix, de->d_name);
		if (S_ISDIR(st.st_mode) && depth < OUTPUTS_DEPTH) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char *p = xasprintf("%s/", name);
			if (sub != -1)
				walk_dir(w, sub, p, depth + 1);
			free(p);
		} else if (S_ISDIR(st.st_mode)) {
			w->truncated = 1;
		} else if (file_ok(w->place, &st)) {
			/* Its type is looked at only if it is reported (to_artifact). */
			add_found(w, name, &st, NULL);
		}
		free(name);
	}
	closedir(d);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->name, ((const struct found *)b)->name);
}

/* Walk outputs/ into *w, sorted by name. */
static void
walk(const struct spill_place *place, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	w->place = place;
	int fd = open_outputs(place);
	if (fd != -1)
		walk_dir(w, fd, "", 0);
	if (w->n > 1)
		qsort(w->f, w->n, sizeof(*w->f), by_name);
}

static void
walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->f[i].name);
	free(w->f);
	memset(w, 0, sizeof(*w));
}

/* An ISO 8601 UTC time of ns nanoseconds since the epoch. Caller frees. */
static char *
iso_time(int64_t ns)
{
	char out[32];
	struct tm tm;
	time_t t = (time_t)(ns / 1000000000);

	gmtime_r(&t, &tm);
	strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(out);
}

static int open_below(const struct spill_place *place, const char *path, char *why,
		      size_t why_len);

/* The MIME type of outputs/`name`, opened safely; by its name alone if it cannot be. */
static const char *
mime_of(const struct spill_place *place, const char *name)
{
	struct stat st;
	int fd = open_below(place, name, NULL, 0);
	const char *type = fd != -1 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
				   ? type_of(fd, name)
				   : mime_guess(name, NULL, 0);
	if (fd != -1)
		close(fd);
	return type;
}

/* Move found file f into artifact *a. */
static void
to_artifact(const struct spill_place *place, struct found *f, struct ipc_artifact *a)
{
	a->mime_type = xstrdup(f->mime ? f->mime : mime_of(place, f->name));
	a->name = f->name;
	f->name = NULL;
	a->size_bytes = f->size;
	a->modified_at = iso_time(f->mtime_ns);
}

void
outputs_list(const struct spill_place *place, struct ipc_files *out)
{
	struct walk w;

	memset(out, 0, sizeof(*out));
	walk(place, &w);
	out->files = xcalloc(w.n ? w.n : 1, sizeof(*out->files));
	for (size_t i = 0; i < w.n; i++)
		to_artifact(place, &w.f[i], &out->files[i]);
	out->n_files = w.n;
	out->truncated = w.truncated;
	walk_free(&w);
}

void
outputs_snap_take(const struct spill_place *place, struct outputs_snap *s)
{
	struct walk w;

	outputs_snap_free(s);
	walk(place, &w);
	s->e = xcalloc(w.n ? w.n : 1, sizeof(*s->e));
	for (size_t i = 0; i < w.n; i++) {
		s->e[i].name = w.f[i].name;
		w.f[i].name = NULL;
		s->e[i].size = w.f[i].size;
		s->e[i].mtime_ns = w.f[i].mtime_ns;
	}
	s->n = w.n;
	s->taken = 1;
	walk_free(&w);
}

void
outputs_snap_free(struct outputs_snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].name);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

static int
entry_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct outputs_entry *)e)->name);
}

void
outputs_changed(const struct spill_place *place, const struct outputs_snap *s,
		struct ipc_result *r)
{
	struct walk w;
	size_t k = 0;

	if (!s->taken)
		return;
	walk(place, &w);
	for (size_t i = 0; i < w.n; i++) {
		const struct outputs_entry *old =
			bsearch(w.f[i].name, s->e, s->n, sizeof(*s->e), entry_cmp);
		if (old && old->size == w.f[i].size && old->mtime_ns == w.f[i].mtime_ns)
			continue;
		if (r->artifacts == NULL)
			r->artifacts = xcalloc(w.n, sizeof(*r->artifacts));
		to_artifact(place, &w.f[i], &r->artifacts[k++]);
	}
	r->n_artifacts = k;
	r->artifacts_truncated = w.truncated;
	walk_free(&w);
}

/* Why opening a component failed, for the caller. */
static const char *
open_error(int e)
{
	switch (e) {
	case ELOOP:
		return "is a symbolic link";
	case ENOTDIR:
		return "is not below a directory (a component is a link or a file)";
	case ENOENT:
		return "does not exist";
	case ENXIO:
		return "is not a regular file";
	default:
		return strerror(e);
	}
}

/*
 * Walk the directories of `path` below dfd (consumed) one at a time, never
 * following a link. The last directory's descriptor with *last pointing
 * at path's last component, or -1 with why[why_len] naming the path and
 * the component refused. `path` passed ipc_artifact_name_ok.
 */
static int
open_dirs(int dfd, const char *path, const char **last, char *why, size_t why_len)
{
	const char *p = path;

	for (size_t len = strcspn(p, "/"); p[len] == '/'; len = strcspn(p, "/")) {
		char *comp = xstrndup(p, len);
		int fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(dfd);
		if (fd == -1) {
			err_set(why, why_len, "%s: refused: %s %s", path, comp, open_error(saved));
			free(comp);
			return -1;
		}
		free(comp);
		dfd = fd;
		p += len + 1;
	}
	*last = p;
	return dfd;
}

/*
 * Open outputs/`path` one component at a time without following links
 * (the last one O_NONBLOCK, so a FIFO does not wait for a writer). The
 * descriptor, or -1 with why[why_len] naming the path and the reason.
 */
static int
open_below(const struct spill_place *place, const char *path, char *why, size_t why_len)
{
	const char *last;

	if (!ipc_artifact_name_ok(path))
		return err_set(why, why_len, "%s: refused: not a relative path below %s/ "
					     "(absolute, empty, \".\" or \"..\")", path, OUTPUTS_DIR);
	int dfd = open_outputs(place);
	if (dfd == -1)
		return err_set(why, why_len, "%s: %s/ %s", path, OUTPUTS_DIR, open_error(errno));
	if ((dfd = open_dirs(dfd, path, &last, why, why_len)) == -1)
		return -1;
	int fd = openat(dfd, last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int saved = errno;
	close(dfd);
	if (fd == -1)
		return err_set(why, why_len, "%s: refused: %s %s", path, last, open_error(saved));
	return fd;
}

int
outputs_open(const struct spill_place *place, const char *path, struct ipc_artifact *a,
	     char *why, size_t why_len)
{
	struct stat st;
	int fd = open_below(place, path, why, why_len);

	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(why, why_len, "%s: refused: not a regular file (a directory, FIFO, "
					     "socket or device)", path);
	}
	if (!file_ok(place, &st)) {
		close(fd);
		return err_set(why, why_len, "%s: refused: not owned by the session's identity",
			       path);
	}
	/* Back to blocking reads for whoever reads it. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	a->name = xstrdup(path);
	a->size_bytes = (uint64_t)st.st_size;
	a->mime_type = xstrdup(type_of(fd, path));
	a->modified_at = iso_time((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	return fd;
}

/* Refuse name `last` in dfd unless it is absent or a regular file of the kernel's identity. */
static int
write_target_ok(const struct spill_place *place, int dfd, const char *path, const char *last,
		char *why, size_t why_len)
{
	struct stat st;

	if (fstatat(dfd, last, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0
				       : err_set(why, why_len, "%s: stat: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return err_set(why, why_len, "%s: refused: %s %s", path, last, open_error(ELOOP));
	if (!S_ISREG(st.st_mode))
		return err_set(why, why_len, "%s: refused: not a regular file (a directory, FIFO, "
					     "socket or device)", path);
	if (!file_ok(place, &st))
		return err_set(why, why_len, "%s: refused: not owned by the session's identity",
			       path);
	return 0;
}

/* Fill the new file fd with data[len], give it to the kernel's identity with `mode`,
 * and sync it. 0, or -1 with why naming `path`. */
static int
write_new(const struct spill_place *place, int fd, const char *path, const void *data,
	  size_t len, unsigned mode, char *why, size_t why_len)
{
	off_t written = 0;

	if (place->chown && fchown(fd, place->uid, place->gid) == -1)
		return err_set(why, why_len, "%s: chown: %s", path, strerror(errno));
	int rc = spill_write(place, fd, &written, data, len);
	if (rc == -1)
		return err_set(why, why_len, "%s: write: %s", path, strerror(errno));
	if (rc == 1)
		return err_set(why, why_len, "%s: refused: %zu bytes exceed the session's file size "
					     "limit of %lld bytes", path, len,
			       (long long)place->max_bytes);
	/* Whole on disk before its name points at it. */
	if (fchmod(fd, (mode_t)(mode & 0755)) == -1)
		return err_set(why, why_len, "%s: chmod: %s", path, strerror(errno));
	if (fsync(fd) == -1)
		return err_set(why, why_len, "%s: fsync: %s", path, strerror(errno));
	return 0;
}

int
outputs_write(const struct spill_place *place, const char *path, const void *data, size_t len,
	      unsigned mode, struct ipc_artifact *a, char *why, size_t why_len)
{
	const char *last;
	char rnd[9];
	struct stat st;

	if (!ipc_artifact_name_ok(path))
		return err_set(why, why_len, "%s: refused: not a relative path below the working "
					     "directory (absolute, empty, \".\" or \"..\")", path);
	int dfd = open(place->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1)
		return err_set(why, why_len, "open %s: %s", place->cwd, strerror(errno));
	if ((dfd = open_dirs(dfd, path, &last, why, why_len)) == -1)
		return -1;
	if (write_target_ok(place, dfd, path, last, why, why_len) == -1) {
		close(dfd);
		return -1;
	}
	rand_hex(rnd, 4);
	char *tmp = xasprintf(".%s.upload-%s", last, rnd);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = fd == -1 ? err_set(why, why_len, "%s: create %s: %s", path, tmp, strerror(errno))
			  : write_new(place, fd, path, data, len, mode, why, why_len);
	/* rename(2) replaces a link planted meanwhile, never what it points at. */
	if (rc == 0 && renameat(dfd, tmp, dfd, last) == -1)
		rc = err_set(why, why_len, "%s: rename: %s", path, strerror(errno));
	/* Written and named: an answer without its size would say nothing. */
	if (rc == 0 && fstat(fd, &st) == -1)
		rc = err_set(why, why_len, "%s: fstat after the rename: %s", path,
			     strerror(errno));
	if (rc == 0) {
		a->name = xstrdup(path);
		a->size_bytes = (uint64_t)st.st_size;
		a->mime_type = xstrdup(mime_guess(path, data, len < MIME_HEAD ? len : MIME_HEAD));
		a->modified_at =
			iso_time((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	} else if (fd != -1) {
		unlinkat(dfd, tmp, 0);
	}
	if (fd != -1)
		close(fd);
	free(tmp);
	close(dfd);
	return rc;
}
