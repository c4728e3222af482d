/* sandbox_immutable.c - see sandbox_immutable.h. */
#include "autoconf.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envp.h"
#include "err.h"
#include "sandbox_immutable.h"
#include "xmalloc.h"

#define MAX_LINK_DEPTH 32

/*
 * Startup variables: rejected unless listed as supported. They act before
 * the filter exists (the loader, the interpreter, IPython and Jupyter read
 * them at start-up), and none has variable-specific validation yet.
 */
struct rejected_var {
	const char *prefix, *why;
};
static const struct rejected_var rejected_env[] = {
	{"LD_", "the dynamic loader reads it before any check (LD_LIBRARY_PATH is validated)"},
	{"DYLD_", "a loader control"},
	{"PYTHON", "an interpreter startup control (only PYTHONNOUSERSITE=1 is supported)"},
	{"IPYTHON", "an IPython startup control"},
	{"JUPYTER", "a Jupyter startup control"},
	{"JPY_", "a Jupyter startup control"},
};

void
sandbox_immutable_ident(struct sandbox_ident *id, int has_id, uid_t uid, gid_t gid)
{
	if (has_id) {
		id->uid = uid;
		id->groups[0] = gid;
		id->ngroups = 1;
		return;
	}
	id->uid = geteuid();
	id->groups[0] = getegid();
	int n = getgroups(SANDBOX_IDENT_GROUPS - 1, id->groups + 1);
	id->ngroups = 1 + (n > 0 ? n : 0);
}

/* 1 if g is one of the identity's groups. */
static int
in_groups(const struct sandbox_ident *id, gid_t g)
{
	for (int i = 0; i < id->ngroups; i++)
		if (id->groups[i] == g)
			return 1;
	return 0;
}

/*
 * Why st (of path) breaks the rule for id, or NULL: owned by the kernel's
 * identity, or writable by it. A sticky directory (/tmp) may be writable
 * by all when it only controls, as a parent, what others own.
 */
static const char *
mutable_why(const struct stat *st, const struct sandbox_ident *id, int as_parent)
{
	if (st->st_uid == id->uid)
		return "is owned by the kernel's identity";
	if (S_ISLNK(st->st_mode))
		return NULL; /* a link's own mode means nothing; its target is checked */
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return NULL; /* /dev/null (masked units link there) carries no code */
	if ((st->st_mode & S_IWGRP) && in_groups(id, st->st_gid))
		return "is writable by a group of the kernel's identity";
	int sticky_dir = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);
	if ((st->st_mode & S_IWOTH) && !(as_parent && sticky_dir))
		return "is writable by everyone";
	return NULL;
}

/* State of one validation (nftw has no user pointer). */
static struct {
	const struct sandbox_ident *id;
	char bad[ERR_LEN]; /* the first failure; "" while none */
	int depth;	/* symbolic link nesting */
	char **seen;	/* trees already walked (owned), so links into them stop */
	size_t nseen;
} chk;

/* 1 if path lies in a tree already walked. */
static int
covered(const char *path)
{
	for (size_t i = 0; i < chk.nseen; i++) {
		size_t n = strlen(chk.seen[i]);
		if (strncmp(path, chk.seen[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/' || (n == 1 && chk.seen[i][0] == '/')))
			return 1;
	}
	return 0;
}

/* Forget the trees walked by the last check. */
static void
forget_seen(void)
{
	for (size_t i = 0; i < chk.nseen; i++)
		free(chk.seen[i]);
	free(chk.seen);
	chk.seen = NULL;
	chk.nseen = 0;
}

static int check_tree(const char *path);

/* Record the first failure about path. */
static void
fail_path(const char *path, const char *why)
{
	if (chk.bad[0] == '\0')
		snprintf(chk.bad, sizeof(chk.bad), "seccomp: %s %s", path, why);
}

static int check_parents(const char *path);

/*
 * A directory above a checked path that is a symbolic link: the walk up the
 * path's text sees the link, not where it leads, yet whoever may replace
 * that target or a directory above it replaces the whole tree. The resolved
 * directory and its own parents must pass too.
 */
static int
check_link_parent(const char *link)
{
	char *real = realpath(link, NULL);
	const char *why;
	struct stat st;

	if (real == NULL) {
		fail_path(link, strerror(errno));
		return -1;
	}
	if (++chk.depth > MAX_LINK_DEPTH)
		fail_path(link, "leads through too many symbolic links");
	else if (stat(real, &st) == -1)
		fail_path(real, strerror(errno));
	else if ((why = mutable_why(&st, chk.id, 1)) != NULL)
		fail_path(real, why);
	else
		check_parents(real);
	chk.depth--;
	free(real);
	return chk.bad[0] ? -1 : 0;
}

/* Every directory above path (not path itself) must be immutable. */
static int
check_parents(const char *path)
{
	char *p = xstrdup(path), *slash;
	struct stat st;

	while ((slash = strrchr(p, '/')) != NULL) {
		*(slash == p ? slash + 1 : slash) = '\0';
		if (lstat(p, &st) == -1) {
			fail_path(p, strerror(errno));
			break;
		}
		const char *why = mutable_why(&st, chk.id, 1);
		if (why) {
			fail_path(p, why);
			break;
		}
		if (S_ISLNK(st.st_mode) && check_link_parent(p) == -1)
			break;
		if (slash == p)
			break;
	}
	free(p);
	return chk.bad[0] ? -1 : 0;
}

/*
 * A link to nothing: the kernel must not be able to create its target, so
 * the nearest existing ancestor of the target must pass as a parent.
 */
static int
check_dangling(const char *path)
{
	char text[PATH_MAX], *p, *slash;
	struct stat st;
	ssize_t n = readlink(path, text, sizeof(text) - 1);

	if (n <= 0) {
		fail_path(path, "is a symbolic link that cannot be read");
		return -1;
	}
	text[n] = '\0';
	if (text[0] == '/') {
		p = xstrdup(text);
	} else {
		char *dir = xstrdup(path);
		*strrchr(dir, '/') = '\0';
		p = xasprintf("%s/%s", dir, text);
		free(dir);
	}
	while (stat(p, &st) == -1 && (slash = strrchr(p, '/')) != NULL && slash != p)
		*slash = '\0';
	char *real = realpath(p, NULL);
	const char *why = NULL;
	if (real == NULL || stat(real, &st) == -1)
		fail_path(path, "is a symbolic link whose target cannot be examined");
	else if ((why = mutable_why(&st, chk.id, 1)) != NULL)
		fail_path(real, why);
	else
		check_parents(real);
	free(real);
	free(p);
	return chk.bad[0] ? -1 : 0;
}

/* A symbolic link found in a tree: its resolved target must pass too. */
static int
check_link(const char *path)
{
	char *target = realpath(path, NULL);

	if (target == NULL && errno == ENOENT)
		return check_dangling(path);
	if (target == NULL) {
		fail_path(path, strerror(errno));
		return -1;
	}
	if (covered(target)) {
		free(target);
		return 0; /* its tree was or is being walked */
	}
	if (++chk.depth > MAX_LINK_DEPTH)
		fail_path(path, "leads through too many symbolic links");
	else if (check_parents(target) == 0)
		check_tree(target);
	chk.depth--;
	free(target);
	return chk.bad[0] ? -1 : 0;
}

/* nftw callback: one entry of a tree under the rule. */
static int
visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *why;

	(void)ftw;
	if (flag == FTW_NS || flag == FTW_DNR) {
		fail_path(path, "cannot be examined");
		return 1;
	}
	if ((why = mutable_why(st, chk.id, 0)) != NULL) {
		fail_path(path, why);
		return 1;
	}
	if (flag == FTW_SL)
		return check_link(path) == -1;
	return 0;
}

/* path and everything below it (links followed to their targets). */
static int
check_tree(const char *path)
{
	chk.seen = xreallocarray(chk.seen, chk.nseen + 1, sizeof(*chk.seen));
	chk.seen[chk.nseen++] = xstrdup(path);
	int rc = nftw(path, visit, 16, FTW_PHYS);

	if (rc == -1)
		fail_path(path, strerror(errno));
	return chk.bad[0] ? -1 : 0;
}

int
sandbox_immutable_path(const char *path, const struct sandbox_ident *id, char *why,
		       size_t why_len)
{
	chk.id = id;
	chk.bad[0] = '\0';
	chk.depth = 0;
	if (path[0] != '/')
		fail_path(path, "is not an absolute path");
	else if (check_parents(path) == 0)
		check_tree(path);
	forget_seen();
	if (chk.bad[0])
		return err_set(why, why_len, "%s", chk.bad);
	return 0;
}

int
sandbox_immutable_env(char **envp, const struct sandbox_ident *id, char *why,
		      size_t why_len)
{
	for (char **e = envp; e && *e; e++) {
		if (strncmp(*e, "LD_LIBRARY_PATH=", 16) == 0 || strcmp(*e, "PYTHONNOUSERSITE=1") == 0)
			continue;
		for (size_t i = 0; i < sizeof(rejected_env) / sizeof(rejected_env[0]); i++) {
			const char *pre = rejected_env[i].prefix;
			if (strncmp(*e, pre, strlen(pre)) == 0) {
				err_set(why, why_len,
					"seccomp: the kernel environment variable %.*s is not supported: %s",
					(int)strcspn(*e, "="), *e, rejected_env[i].why);
				return -1;
			}
		}
	}
	const char *llp = envp_get(envp, "LD_LIBRARY_PATH");
	if (llp == NULL)
		return 0;
	char *list = xstrdup(llp), *save = NULL;
	int rc = 0;
	if (*list == '\0' || strstr(list, "::") || *list == ':' || list[strlen(list) - 1] == ':') {
		err_set(why, why_len,
			"seccomp: LD_LIBRARY_PATH has an empty entry (the current directory)");
		rc = -1;
	}
	for (char *t = strtok_r(list, ":", &save); t && rc == 0; t = strtok_r(NULL, ":", &save))
		rc = sandbox_immutable_path(t, id, why, why_len);
	free(list);
	return rc;
}

int
sandbox_immutable_array(struct json_object *o, const char *key, const struct sandbox_ident *id,
			char *why, size_t why_len)
{
	struct json_object *a;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) {
		err_set(why, why_len, "seccomp: the interpreter's report lacks %s", key);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		if (sandbox_immutable_path(json_object_get_string(p), id, why, why_len) == -1)
			return -1;
	}
	return 0;
}
