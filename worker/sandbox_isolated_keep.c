/*
 * sandbox_isolated_keep.c - isolated, before the fork: what the kernel's
 * mount namespace covers with a private tmpfs and what it binds back.
 *
 * Covered are the private directories (/tmp, /run...) and the daemon's own
 * directories, START's hide_paths that are directories (state_dir,
 * runtime_dir): every session's files and every socket of the daemon and
 * its sidecars lie there, wherever the configuration puts them. Bound back
 * over the cover holding it are exactly the directories the kernel must
 * reach: its cwd and runtime_dir, the prefix of its interpreter and each
 * directory its environment names (the environment's root, PATH, the
 * asset cache, a sidecar's socket directory). Nothing else of a covered
 * directory shows, so a sibling session or a socket the daemon binds there
 * stays out of reach. Paths are canonical: the child mounts on them as
 * they are.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "sandbox.h"
#include "xmalloc.h"

/* 1 if dir is path or one of its ancestors. */
static int
is_at_or_above(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

const char *
sandbox_cover_path(const struct sandbox_launch *ln, int c)
{
	return c < SANDBOX_NPRIVATE ? sandbox_private_dirs[c] : ln->hide_dir[c - SANDBOX_NPRIVATE];
}

/* The innermost cover strictly above path, or -1: path is not covered, or a cover itself. */
static int
cover_of(const struct sandbox_launch *ln, const char *path)
{
	int best = -1;
	size_t best_len = 0;

	for (int c = 0; c < SANDBOX_NPRIVATE + ln->n_hide_dir; c++) {
		const char *dir = sandbox_cover_path(ln, c);
		size_t n = strlen(dir);
		if (strcmp(dir, path) == 0)
			return -1;
		if (is_at_or_above(dir, path) && n > best_len) {
			best = c;
			best_len = n;
		}
	}
	return best;
}

/* Drop keep i, keeping the order of the others. */
static void
keep_drop(struct sandbox_launch *ln, int i)
{
	free(ln->keep_path[i]);
	for (int j = i + 1; j < ln->n_keep; j++) {
		ln->keep_path[j - 1] = ln->keep_path[j];
		ln->keep_under[j - 1] = ln->keep_under[j];
	}
	ln->n_keep--;
}

/*
 * Keep directory `dir` (canonical; taken) over its cover: none nested in
 * another keep of the same cover, whose bind shows it already. 0, or -1
 * with why[why_len] when there are more than SANDBOX_KEEP_MAX.
 */
static int
keep_add(struct sandbox_launch *ln, char *dir, char *why, size_t why_len)
{
	int c = cover_of(ln, dir);

	for (int i = 0; c >= 0 && i < ln->n_keep; i++)
		if (ln->keep_under[i] == c && is_at_or_above(ln->keep_path[i], dir))
			c = -1;
	if (c < 0) {
		free(dir);
		return 0;
	}
	for (int i = ln->n_keep - 1; i >= 0; i--)
		if (ln->keep_under[i] == c && is_at_or_above(dir, ln->keep_path[i]))
			keep_drop(ln, i);
	if (ln->n_keep >= SANDBOX_KEEP_MAX) {
		free(dir);
		return err_set(why, why_len,
			       "kernel_network_mode isolated: more than %d directories to keep",
			       SANDBOX_KEEP_MAX);
	}
	ln->keep_path[ln->n_keep] = dir;
	ln->keep_under[ln->n_keep++] = c;
	return 0;
}

/*
 * Keep the directory that path[len] names, or the one holding it when it
 * names a file (a socket); `prefix`: the interpreter's, above its bin/.
 */
static int
keep_named(struct sandbox_launch *ln, const char *path, size_t len, int prefix, char *why,
	   size_t why_len)
{
	char *named = xstrndup(path, len), *real = realpath(named, NULL), *slash;
	struct stat st;

	free(named);
	if (real == NULL || stat(real, &st) == -1)
		goto none;
	if (!S_ISDIR(st.st_mode) && (slash = strrchr(real, '/')) != NULL)
		*(slash == real ? slash + 1 : slash) = 0;
	slash = strrchr(real, '/');
	if (prefix && slash && slash != real && strcmp(slash, "/bin") == 0)
		*slash = 0;
	return keep_add(ln, real, why, why_len);
none:
	free(real);
	return 0;
}

/*
 * The daemon's directories to cover: canonical, ancestors first; none that
 * holds a private directory or the root, which would hide the system.
 */
static void
hide_dirs(struct sandbox_launch *ln, char **hide)
{
	for (char **h = hide; h && *h && ln->n_hide_dir < SANDBOX_HIDE_MAX; h++) {
		char *real = realpath(*h, NULL);
		struct stat st;
		int skip = real == NULL || stat(real, &st) == -1 || !S_ISDIR(st.st_mode);
		for (int d = 0; !skip && d < SANDBOX_NPRIVATE; d++)
			skip = is_at_or_above(real, sandbox_private_dirs[d]);
		for (int i = 0; !skip && i < ln->n_hide_dir; i++)
			skip = strcmp(ln->hide_dir[i], real) == 0;
		if (skip) {
			free(real);
			continue;
		}
		int i = ln->n_hide_dir++;
		for (; i > 0 && strlen(ln->hide_dir[i - 1]) > strlen(real); i--)
			ln->hide_dir[i] = ln->hide_dir[i - 1];
		ln->hide_dir[i] = real;
	}
}

/*
 * The egress socket's directory, opened before the covers hide it: the
 * forwarder (sandbox_isolated.c) connects to the socket relative to it.
 */
static int
egress_dir(const struct sandbox *sb, struct sandbox_launch *ln, char *why, size_t why_len)
{
	const char *sock = sb->egress_socket;

	if (sock == NULL)
		return 0;
	char *dir = xstrndup(sock, (size_t)(strrchr(sock, '/') - sock));
	ln->egress_dir = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ln->egress_dir == -1)
		err_set(why, why_len, "egress proxy directory %s: %s", dir, strerror(errno));
	free(dir);
	ln->egress_name = strrchr(sock, '/') + 1;
	return ln->egress_dir == -1 ? -1 : 0;
}

int
sandbox_isolated_prepare(const struct sandbox *sb, char **argv, char **envp, const char *cwd,
			 const char *runtime_dir, struct sandbox_launch *ln, char *why,
			 size_t why_len)
{
	hide_dirs(ln, sb->hide_paths);
	if (keep_named(ln, cwd, strlen(cwd), 0, why, why_len) == -1 ||
	    keep_named(ln, runtime_dir, strlen(runtime_dir), 0, why, why_len) == -1 ||
	    keep_named(ln, argv[0], strlen(argv[0]), 1, why, why_len) == -1)
		return -1;
	/* A link to the interpreter (a virtualenv's) lies in the prefix the kernel needs too. */
	const char *slash = strrchr(argv[0], '/');
	if (slash && slash != argv[0] &&
	    keep_named(ln, argv[0], (size_t)(slash - argv[0]), 1, why, why_len) == -1)
		return -1;
	/* The environment's paths (PATH, the asset cache...): each piece of a list. */
	for (char **e = envp; e && *e; e++) {
		const char *v = strchr(*e, '=');
		for (v = v ? v + 1 : NULL; v && *v; v += strcspn(v, ":") + (v[strcspn(v, ":")] != 0))
			if (*v == '/' && keep_named(ln, v, strcspn(v, ":"), 0, why, why_len) == -1)
				return -1;
	}
	return egress_dir(sb, ln, why, why_len);
}
