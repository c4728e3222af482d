/*
 * sandbox_landlock.c - kernel_landlock: the kernel, whatever its network
 * mode, may read and execute only the system's directories and what its
 * command and environment name, write only its own working and runtime
 * directories, its temporary directories and a few devices, connect to no
 * abstract Unix socket and signal no process outside its own Landlock
 * domain.
 *
 * The worker builds the ruleset before the fork, where it may allocate and
 * read directories; the child only adds what an isolated kernel's new
 * mounts made (its private /tmp, /var/tmp, /dev/shm and /proc, which did
 * not exist before) and restricts itself, after no_new_privs.
 *
 * Landlock only allows: to keep the daemon's configuration, state_dir and
 * runtime_dir (START's hide_paths) out of a directory the kernel reads
 * or writes, that directory gets no rule of its own but each of its
 * entries does, down to the hidden paths, which get none. A path named
 * below a hidden one (the kernel's cwd, below state_dir) is its own.
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envp.h"
#include "landlock.h"
#include "sandbox.h"
#include "xmalloc.h"

/* What a kernel reads and executes, wherever its environment lies. */
static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys",
	"/dev",
};

/* The devices a kernel opens for writing. */
static const char *const rw_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
	"/dev/ptmx", "/dev/pts",
};

/* The variables naming the kernel's temporary directories (kernel_env.c sets them). */
static const char *const temp_vars[] = {"TMPDIR", "TMP", "TEMP"};

/* The rights a rule may carry on what is not a directory. */
#define FILE_RIGHTS                                                                     \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                   \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                   \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* A ruleset being built: its descriptor, the rights it handles, the hidden paths. */
struct rules {
	int fd;
	uint64_t handled;
	char *hide[SANDBOX_HIDE_MAX]; /* canonical */
	int n_hide;
	char *why;
	size_t why_len;
};

/* 1 if a is b or lies below it. */
static int
at_or_below(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return 1;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* 0: nothing hidden at or below path; 1: path is or lies below one; 2: one lies below it. */
static int
hidden_at(const struct rules *r, const char *path)
{
	int above = 0;

	for (int i = 0; i < r->n_hide; i++) {
		if (at_or_below(path, r->hide[i]))
			return 1;
		if (at_or_below(r->hide[i], path))
			above = 2;
	}
	return above;
}

/* 1 if path is one of the hidden paths. */
static int
is_hidden(const struct rules *r, const char *path)
{
	for (int i = 0; i < r->n_hide; i++)
		if (strcmp(path, r->hide[i]) == 0)
			return 1;
	return 0;
}

/* One rule: `access` beneath the open fd (a file gets only its file rights). */
static int
add_fd(struct rules *r, int fd, const char *path, uint64_t access)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return err_set(r->why, r->why_len, "landlock: stat %s: %s", path, strerror(errno));
	access &= r->handled;
	if (!S_ISDIR(st.st_mode))
		access &= FILE_RIGHTS;
	if (landlock_add_path(r->fd, fd, access) == -1)
		return err_set(r->why, r->why_len, "landlock: add a rule for %s: %s", path,
			       strerror(errno));
	return 0;
}

static int add_split(struct rules *r, const char *dir, uint64_t access);

/*
 * `access` beneath the canonical path, hidden paths left out; a path that
 * does not exist needs no rule. below_ok: it was named for the kernel
 * itself, so a hidden path above it does not matter.
 */
static int
add_canonical(struct rules *r, const char *path, uint64_t access, int below_ok)
{
	int h = hidden_at(r, path);

	if (h == 2)
		return add_split(r, path, access);
	/* A hidden path itself is never the kernel's, even when named. */
	if (h == 1 && (!below_ok || is_hidden(r, path)))
		return 0;
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT || errno == EACCES
			       ? 0
			       : err_set(r->why, r->why_len, "landlock: open %s: %s", path,
					 strerror(errno));
	int rc = add_fd(r, fd, path, access);
	close(fd);
	return rc;
}

/* Each entry of dir (a real directory above a hidden path), but for the hidden ones. */
static int
add_split(struct rules *r, const char *dir, uint64_t access)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	/* One the worker may not list gets no rule: Landlock then denies all below it. */
	if (d == NULL)
		return errno == EACCES ? 0
				       : err_set(r->why, r->why_len, "landlock: open directory %s: %s",
						 dir, strerror(errno));
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* A link's target is checked where it lies; the link itself needs no rule. */
		if (e->d_type == DT_LNK)
			continue;
		char *p = xasprintf("%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", e->d_name);
		rc = add_canonical(r, p, access, 0);
		free(p);
	}
	closedir(d);
	return rc;
}

/* `access` beneath path as named (through its links), hidden paths left out. */
static int
add_path(struct rules *r, const char *path, size_t len, uint64_t access, int own)
{
	char *named = xstrndup(path, len), *real = realpath(named, NULL);
	int rc = 0;

	if (real)
		rc = add_canonical(r, real, access, own);
	free(real);
	free(named);
	return rc;
}

/* Read-only: every absolute path of the kernel's argv and of each value of its environment. */
static int
add_named(struct rules *r, char **argv, char **envp)
{
	for (char **a = argv; a && *a; a++)
		if (**a == '/' && add_path(r, *a, strlen(*a), LANDLOCK_FS_READ_ONLY, 1) == -1)
			return -1;
	for (char **e = envp; e && *e; e++) {
		const char *v = strchr(*e, '=');
		for (v = v ? v + 1 : NULL; v && *v; v += strcspn(v, ":") + (v[strcspn(v, ":")] != 0))
			if (*v == '/' &&
			    add_path(r, v, strcspn(v, ":"), LANDLOCK_FS_READ_ONLY, 1) == -1)
				return -1;
	}
	return 0;
}

/* Read-write: cwd, runtime_dir, the temporary directories (host ones outside isolated). */
static int
add_writable(struct rules *r, const struct sandbox *sb, char **envp, const char *cwd,
	     const char *runtime_dir)
{
	uint64_t all = r->handled;

	if (add_path(r, cwd, strlen(cwd), all, 1) == -1 ||
	    add_path(r, runtime_dir, strlen(runtime_dir), all, 1) == -1)
		return -1;
	for (size_t i = 0; i < sizeof(rw_devices) / sizeof(rw_devices[0]); i++)
		if (add_path(r, rw_devices[i], strlen(rw_devices[i]), all, 0) == -1)
			return -1;
	for (size_t i = 0; i < sizeof(temp_vars) / sizeof(temp_vars[0]); i++) {
		const char *t = envp_get(envp, temp_vars[i]);
		if (t && *t == '/' && add_path(r, t, strlen(t), all, 0) == -1)
			return -1;
	}
	if (sb->mode == NET_ISOLATED)
		return 0; /* its own, mounted in the child: sandbox_landlock_child() */
	for (int d = 0; d < SANDBOX_NTEMP; d++)
		if (add_path(r, sandbox_private_dirs[d], strlen(sandbox_private_dirs[d]), all, 0) ==
		    -1)
			return -1;
	return add_path(r, "/proc", 5, LANDLOCK_FS_READ_ONLY, 0);
}

/* The hidden paths, canonical; one that does not exist hides nothing. */
static void
rules_hide(struct rules *r, char **hide)
{
	for (char **h = hide; h && *h && r->n_hide < SANDBOX_HIDE_MAX; h++) {
		char *real = realpath(*h, NULL);
		if (real)
			r->hide[r->n_hide++] = real;
	}
}

/*
 * isolated: which of its private directories the child may give the kernel
 * whole: none that a hidden path lies below, which the kernel would reach
 * through the directories kept there (sandbox_isolated.c).
 */
static unsigned
late_dirs(const struct rules *r)
{
	unsigned late = SANDBOX_LATE_PROC;

	for (int d = 0; d < SANDBOX_NPRIVATE; d++) {
		/* A link (/var/run) leads to another of them, which has its own bit. */
		char *real = realpath(sandbox_private_dirs[d], NULL);
		if (real && strcmp(real, sandbox_private_dirs[d]) == 0 &&
		    hidden_at(r, sandbox_private_dirs[d]) == 0)
			late |= 1u << d;
		free(real);
	}
	return late;
}

int
sandbox_landlock_prepare(const struct sandbox *sb, char **argv, char **envp, const char *cwd,
			 const char *runtime_dir, struct sandbox_launch *ln, char *why,
			 size_t why_len)
{
	struct rules r = {.handled = landlock_fs_rights(sb->landlock_abi), .why = why,
			  .why_len = why_len};
	struct landlock_attr attr = {.handled_access_fs = r.handled};
	int rc = -1;

	if (sb->landlock_abi >= LANDLOCK_ABI_SCOPED)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	/* An older ABI's kernel reads only its part of the attribute, and refuses more. */
	r.fd = landlock_create(&attr, sb->landlock_abi >= LANDLOCK_ABI_SCOPED
					      ? sizeof(attr)
					      : sizeof(attr.handled_access_fs),
			       0);
	if (r.fd == -1)
		return err_set(why, why_len, "landlock: create the ruleset (ABI %d): %s",
			       sb->landlock_abi, strerror(errno));
	rules_hide(&r, sb->hide_paths);
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (add_path(&r, system_dirs[i], strlen(system_dirs[i]), LANDLOCK_FS_READ_ONLY,
			     0) == -1)
			goto out;
	if (sb->helper && add_path(&r, sb->helper, strlen(sb->helper), LANDLOCK_FS_READ_ONLY,
				   1) == -1)
		goto out;
	if (add_named(&r, argv, envp) == -1 ||
	    add_writable(&r, sb, envp, cwd, runtime_dir) == -1)
		goto out;
	ln->ll_late = sb->mode == NET_ISOLATED ? late_dirs(&r) : 0;
	ln->ll_rw = r.handled;
	ln->ll_fd = r.fd;
	r.fd = -1;
	rc = 0;
out:
	if (r.fd >= 0)
		close(r.fd);
	for (int i = 0; i < r.n_hide; i++)
		free(r.hide[i]);
	return rc;
}

/* In the child: one rule for a directory it just mounted; 0 or -1 with errno. */
static int
add_mounted(int ruleset, const char *dir, uint64_t access)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd == -1)
		return -1;
	int rc = landlock_add_path(ruleset, fd, access);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
sandbox_landlock_child(const struct sandbox_launch *ln)
{
	for (int d = 0; d < SANDBOX_NPRIVATE; d++)
		if ((ln->ll_late & (1u << d)) &&
		    add_mounted(ln->ll_fd, sandbox_private_dirs[d], ln->ll_rw) == -1)
			return -1;
	if ((ln->ll_late & SANDBOX_LATE_PROC) &&
	    add_mounted(ln->ll_fd, "/proc", LANDLOCK_FS_READ_ONLY & ln->ll_rw) == -1)
		return -1;
	return landlock_restrict(ln->ll_fd);
}
