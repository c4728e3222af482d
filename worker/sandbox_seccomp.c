/*
 * sandbox_seccomp.c - kernel_network_mode seccomp: an isolated Python
 * startup over an immutable environment, then a seccomp filter the kernel
 * installs on itself when the worker says it is ready.
 *
 * Why from inside: seccomp filters only ever apply to the calling thread
 * (and, with TSYNC, its siblings); nothing outside can install one on a
 * running process. The filter cannot be installed before exec either,
 * because ZeroMQ and Jupyter need sockets while they start. So the startup
 * below (our code, passed with -c, nothing read from disk but validated
 * roots) loads codeexec-seccomp.so from beside the worker and keeps a
 * lock() the worker runs silently once the handshake is done, before READY
 * (see main.c). The worker then checks /proc/PID/task/\*\/status from the
 * outside: a kernel that did not lock itself is killed.
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "envp.h"
#include "fs_tree.h"
#include "log.h"
#include "sandbox.h"
#include "sandbox_steps.h"
#include "xmalloc.h"

#define HELPER_NAME "codeexec-seccomp.so"
#define QUERY_TIMEOUT_MS 20000
#define MAX_GROUPS 64
#define MAX_LINK_DEPTH 32

/*
 * Startup variables: rejected unless listed as supported. They act before
 * the filter exists (the loader, the interpreter, IPython and Jupyter read
 * them at start-up), and none has variable-specific validation yet.
 */
static const struct {
	const char *prefix;
	const char *why;
} rejected_env[] = {
	{"LD_", "the dynamic loader reads it before any check (LD_LIBRARY_PATH is validated)"},
	{"DYLD_", "a loader control"},
	{"PYTHON", "an interpreter startup control (only PYTHONNOUSERSITE=1 is supported)"},
	{"IPYTHON", "an IPython startup control"},
	{"JUPYTER", "a Jupyter startup control"},
	{"JPY_", "a Jupyter startup control"},
};

/*
 * Asked of the interpreter (run -I -S as the kernel identity) before the
 * kernel: where its standard library and package roots are. No .pth file
 * is read: site.main() never runs.
 */
static const char query_code[] =
	"import json, os, site, sys\n"
	"cfg = os.path.join(sys.prefix, 'pyvenv.cfg')\n"
	"pre = [sys.prefix]\n"
	"if os.path.isfile(cfg):\n"
	"    for line in open(cfg):\n"
	"        k, _, v = line.partition('=')\n"
	"        if k.strip().lower() == 'include-system-site-packages' and v.strip().lower() == 'true':\n"
	"            pre.append(sys.base_prefix)\n"
	"else:\n"
	"    cfg = None\n"
	"roots = [d for d in site.getsitepackages(pre) if os.path.isdir(d)]\n"
	"print(json.dumps({'path': [p for p in sys.path if os.path.exists(p)], 'roots': roots, 'cfg': cfg}))\n";

/*
 * The kernel's startup: argv is [-c, helper, cwd descriptor, connection
 * file, N, N options for IPKernelApp, roots...]. The working directory
 * comes as an inherited descriptor, not a path: argv is readable by every
 * process, and a kernel of the same uid that learnt the path would reach
 * this session's files. No configuration file, extension, startup file or
 * exec_lines runs, and debugpy is kept out (the Jupyter debugger needs
 * TCP), as is IOPub's pipe for forked subprocesses (a TCP listener on
 * 127.0.0.1); cwd joins sys.path only after the filter is in place, since
 * a former kernel of this session may have left modules there.
 */
static const char boot_code[] =
	"import sys\n"
	"helper, cwd, conn, nopt = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])\n"
	"opts = sys.argv[5:5 + nopt]\n"
	"sys.path.extend(sys.argv[5 + nopt:])\n"
	"sys.argv = [sys.argv[0]]\n"
	"import ctypes, os, types\n"
	"_lib = ctypes.CDLL(helper)\n"
	"def lock():\n"
	"    global cwd\n"
	"    err = ctypes.create_string_buffer(512)\n"
	"    if _lib.codeexec_seccomp_lock(err, len(err)) != 0:\n"
	"        raise OSError('seccomp: ' + err.value.decode(errors='replace'))\n"
	"    if cwd >= 0:\n" /* agent code may call lock() again */
	"        os.fchdir(cwd)\n"
	"        os.close(cwd)\n"
	"        cwd = -1\n"
	"    if '' not in sys.path:\n"
	"        sys.path.insert(0, '')\n"
	"_m = types.ModuleType('_codeexecd_seccomp')\n"
	"_m.lock = lock\n"
	"sys.modules[_m.__name__] = _m\n"
	"sys.modules['debugpy'] = None\n" /* importing it opens a TCP listener */
	"import ipykernel.iostream as _io\n"
	"_io_init = _io.IOPubThread.__init__\n"
	"def _no_pipe(self, socket, pipe=False):\n" /* the fork pipe listens on TCP */
	"    _io_init(self, socket, pipe=False)\n"
	"_io.IOPubThread.__init__ = _no_pipe\n"
	"from ipykernel.kernelapp import IPKernelApp\n"
	"class App(IPKernelApp):\n"
	"    def load_config_file(self, *a, **k): pass\n"
	"    def init_path(self): pass\n"
	"    def init_extensions(self): pass\n"
	"    def init_code(self): pass\n"
	"app = App.instance()\n"
	"app.initialize(['-f', conn] + opts)\n"
	"app.start()\n";

static const char lock_code[] = "__import__('_codeexecd_seccomp').lock()";

const char *
sandbox_seccomp_lock_code(void)
{
	return lock_code;
}

/* The identity the immutable-environment rule is checked against. */
struct ident {
	uid_t uid;
	gid_t groups[MAX_GROUPS];
	int ngroups;
};

/* The kernel identity: START's uid/gid, else ours with our groups. */
static void
ident_of(const struct sandbox *sb, struct ident *id)
{
	if (sb->has_id) {
		id->uid = sb->uid;
		id->groups[0] = sb->gid;
		id->ngroups = 1;
		return;
	}
	id->uid = geteuid();
	id->groups[0] = getegid();
	int n = getgroups(MAX_GROUPS - 1, id->groups + 1);
	id->ngroups = 1 + (n > 0 ? n : 0);
}

/* 1 if g is one of the identity's groups. */
static int
in_groups(const struct ident *id, gid_t g)
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
mutable_why(const struct stat *st, const struct ident *id, int as_parent)
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
	const struct ident *id;
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

/* The immutable-environment rule for path: parents, itself, its tree. */
static int
check_path(const char *path, const struct ident *id, char *why, size_t why_len)
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

/* Reject unsupported startup variables; validate LD_LIBRARY_PATH entries. */
static int
check_env(char **envp, const struct ident *id, char *why, size_t why_len)
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
		rc = check_path(t, id, why, why_len);
	free(list);
	return rc;
}

/* In the query child: become the kernel identity, then exec. Never returns. */
static void __attribute__((noreturn))
query_child(const struct sandbox *sb, char **argv, char **envp, int out)
{
	if (dup2(out, 1) == -1)
		_exit(126);
	/* A non-root worker's capabilities survive the uid change: drop them. */
	if (sb->has_id && (sandbox_become(sb->uid, sb->gid) == -1 || sandbox_drop_caps() == -1))
		_exit(126);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 || chdir("/") == -1)
		_exit(126);
	execve(argv[0], argv, envp);
	_exit(127);
}

/* Read all of fd until EOF or the deadline; 0, or -1. */
static int
read_all(int fd, struct buf *b, int timeout_ms)
{
	char chunk[4096];
	struct pollfd p = {fd, POLLIN, 0};
	double end = clock_mono() + timeout_ms / 1e3;

	for (;;) {
		long left = (long)((end - clock_mono()) * 1e3);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			buf_add(b, chunk, (size_t)n);
	}
}

/* Ask the interpreter for its paths (query_code). Caller owns the result. */
static struct json_object *
query_paths(const struct sandbox *sb, const char *python, char **envp, char *why, size_t why_len)
{
	char *argv[] = {(char *)python, (char *)"-I", (char *)"-S", (char *)"-c",
			(char *)query_code, NULL};
	int p[2], status;
	struct buf out;
	struct json_object *o = NULL;

	if (pipe2(p, O_CLOEXEC) == -1) {
		err_set(why, why_len, "seccomp: pipe: %s", strerror(errno));
		return NULL;
	}
	pid_t pid = fork();
	if (pid == 0)
		query_child(sb, argv, envp, p[1]);
	close(p[1]);
	if (pid == -1) {
		err_set(why, why_len, "seccomp: fork: %s", strerror(errno));
		close(p[0]);
		return NULL;
	}
	buf_init(&out);
	int rc = read_all(p[0], &out, QUERY_TIMEOUT_MS);
	close(p[0]);
	if (rc == -1)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		o = json_tokener_parse(out.data ? out.data : "");
	if (o == NULL)
		err_set(why, why_len,
			"seccomp: %s -I -S could not report its library paths (wait status %#x)",
			python, (unsigned)status);
	buf_free(&out);
	return o;
}

/* Check every string of array `key` in o; 0, or -1 with *why. */
static int
check_array(struct json_object *o, const char *key, const struct ident *id, char *why,
	    size_t why_len)
{
	struct json_object *a;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) {
		err_set(why, why_len, "seccomp: the interpreter's report lacks %s", key);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		if (check_path(json_object_get_string(p), id, why, why_len) == -1)
			return -1;
	}
	return 0;
}

/*
 * A fresh private start directory <runtime_dir>/boot with empty IPython
 * and Jupyter directories, owned by the kernel's identity. Caller frees.
 */
static char *
make_boot_dir(const struct sandbox *sb, const char *runtime_dir, char *why, size_t why_len)
{
	static const char *const sub[] = {"home", "ipython", "jupyter", "jupyter/config",
					  "jupyter/data", "jupyter/runtime"};
	int rfd = open(runtime_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (rfd == -1) {
		err_set(why, why_len, "seccomp: open %s: %s", runtime_dir, strerror(errno));
		return NULL;
	}
	fs_remove_tree_at(rfd, "boot"); /* a former kernel's, with whatever it left */
	char *boot = xasprintf("%s/boot", runtime_dir);
	int ok = mkdirat(rfd, "boot", 0700) == 0;
	for (size_t i = 0; ok && i < sizeof(sub) / sizeof(sub[0]); i++) {
		char *p = xasprintf("boot/%s", sub[i]);
		ok = mkdirat(rfd, p, 0700) == 0 &&
		     (!sb->has_id || fchownat(rfd, p, sb->uid, sb->gid, AT_SYMLINK_NOFOLLOW) == 0);
		free(p);
	}
	ok = ok && (!sb->has_id || fchownat(rfd, "boot", sb->uid, sb->gid, AT_SYMLINK_NOFOLLOW) == 0);
	if (!ok) {
		err_set(why, why_len, "seccomp: cannot make %s: %s", boot, strerror(errno));
		free(boot);
		boot = NULL;
	}
	close(rfd);
	return boot;
}

/* HELPER_NAME beside our own executable. Caller frees. */
static char *
helper_path(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return xstrdup("/nonexistent/" HELPER_NAME);
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	*slash = '\0';
	return xasprintf("%s/%s", self, HELPER_NAME);
}

/* Count of a NULL-terminated vector. */
static size_t
count(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/*
 * The kernel's environment plus the startup's fixed, fresh directories.
 * HOME too is fresh and private: the kernel stays readable by its uid
 * until it locks itself, and a HOME in the session's directory would tell
 * a sibling of the same uid where that directory is.
 */
static char **
boot_env(char **envp, const char *boot)
{
	size_t n = count(envp), i = 0;
	char **v = xcalloc(n + 9, sizeof(*v));

	for (size_t j = 0; j < n; j++)
		if (strncmp(envp[j], "HOME=", 5) != 0)
			v[i++] = xstrdup(envp[j]);
	v[i++] = xasprintf("HOME=%s/home", boot);
	if (envp_get(envp, "PYTHONNOUSERSITE") == NULL)
		v[i++] = xstrdup("PYTHONNOUSERSITE=1");
	v[i++] = xasprintf("IPYTHONDIR=%s/ipython", boot);
	v[i++] = xasprintf("JUPYTER_CONFIG_DIR=%s/jupyter/config", boot);
	v[i++] = xasprintf("JUPYTER_DATA_DIR=%s/jupyter/data", boot);
	v[i++] = xasprintf("JUPYTER_RUNTIME_DIR=%s/jupyter/runtime", boot);
	v[i++] = xstrdup("JUPYTER_NO_CONFIG=1");
	return v;
}

/* The value after "-f" in the kernel's argv (the connection file), or NULL. */
static const char *
conn_arg(char **argv)
{
	for (size_t i = 0; argv[i]; i++)
		if (strcmp(argv[i], "-f") == 0 && argv[i + 1])
			return argv[i + 1];
	return NULL;
}

/*
 * [python, -I, -S, -B, -c, boot_code, helper, cwd_fd, conn, N, options...,
 * roots...]: the options are the kernel argv's "--Class.trait=value" ones
 * (kernel_history's), which IPKernelApp.initialize takes as its own.
 */
static char **
boot_argv(const char *python, const char *helper, int cwd_fd, const char *conn, char **argv,
	  struct json_object *roots)
{
	size_t n = json_object_array_length(roots), nargv = count(argv), i = 0, nopt = 0;
	char **v = xcalloc(n + nargv + 11, sizeof(*v));

	for (size_t j = 0; j < nargv; j++)
		nopt += strncmp(argv[j], "--", 2) == 0;
	v[i++] = xstrdup(python);
	v[i++] = xstrdup("-I"); /* no PYTHON* variables, no user site, no script directory */
	v[i++] = xstrdup("-S"); /* no site.main(): no .pth file, no sitecustomize */
	v[i++] = xstrdup("-B"); /* writes nothing into the environment */
	v[i++] = xstrdup("-c");
	v[i++] = xstrdup(boot_code);
	v[i++] = xstrdup(helper);
	v[i++] = xasprintf("%d", cwd_fd);
	v[i++] = xstrdup(conn);
	v[i++] = xasprintf("%zu", nopt);
	for (size_t j = 0; j < nargv; j++)
		if (strncmp(argv[j], "--", 2) == 0)
			v[i++] = xstrdup(argv[j]);
	for (size_t j = 0; j < n; j++)
		v[i++] = xstrdup(json_object_get_string(json_object_array_get_idx(roots, j)));
	return v;
}

int
sandbox_seccomp_prepare(struct sandbox *sb, char **argv, char **envp, const char *cwd,
			const char *runtime_dir, struct sandbox_launch *ln, char *why, size_t why_len)
{
	struct ident id;
	struct json_object *rep = NULL, *roots, *cfg;
	const char *python = argv[0];

	ident_of(sb, &id);
	if (id.uid == 0) {
		err_set(why, why_len,
			"seccomp: the kernel would run as root, which can change any path of its environment; run codeexecd as a user, or give kernels uid/gid");
		return -1;
	}
	if (python[0] != '/') {
		err_set(why, why_len, "seccomp: the kernel program %s must be an absolute path",
			python);
		return -1;
	}
	free(sb->helper);
	sb->helper = helper_path();
	if (check_env(envp, &id, why, why_len) == -1 ||
	    check_path(python, &id, why, why_len) == -1 ||
	    check_path(sb->helper, &id, why, why_len) == -1)
		return -1;
	if ((rep = query_paths(sb, python, envp, why, why_len)) == NULL)
		return -1;
	int rc = -1;
	if (check_array(rep, "path", &id, why, why_len) == -1 ||
	    check_array(rep, "roots", &id, why, why_len) == -1)
		goto out;
	if (json_object_object_get_ex(rep, "cfg", &cfg) && json_object_is_type(cfg, json_type_string) &&
	    check_path(json_object_get_string(cfg), &id, why, why_len) == -1)
		goto out;
	const char *conn = conn_arg(argv);
	if (conn == NULL) {
		err_set(why, why_len, "seccomp: the kernel's argv has no -f CONNECTION_FILE");
		goto out;
	}
	if ((ln->start_dir = make_boot_dir(sb, runtime_dir, why, why_len)) == NULL)
		goto out;
	/* O_PATH: the kernel's fchdir checks its own rights, not ours. */
	ln->pass_fd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ln->pass_fd == -1) {
		err_set(why, why_len, "seccomp: open %s: %s", cwd, strerror(errno));
		goto out;
	}
	json_object_object_get_ex(rep, "roots", &roots);
	ln->argv = boot_argv(python, sb->helper, ln->pass_fd, conn, argv, roots);
	ln->envp = boot_env(envp, ln->start_dir);
	rc = 0;
out:
	json_object_put(rep);
	return rc;
}

/* Seccomp and NoNewPrivs of one /proc/PID/task/TID/status; 0 if locked. */
static int
task_locked(const char *path, char *why, size_t why_len)
{
	char text[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd == -1 ? -1 : read(fd, text, sizeof(text) - 1);

	if (fd != -1)
		close(fd);
	if (n <= 0) {
		err_set(why, why_len, "seccomp: cannot read %s", path);
		return -1;
	}
	text[n] = '\0';
	if (strstr(text, "\nSeccomp:\t2\n") == NULL || strstr(text, "\nNoNewPrivs:\t1\n") == NULL) {
		err_set(why, why_len, "seccomp: %s does not show Seccomp: 2 and NoNewPrivs: 1",
			path);
		return -1;
	}
	return 0;
}

int
sandbox_seccomp_verify(pid_t pid, char *why, size_t why_len)
{
	char *dir = xasprintf("/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0, n = 0;

	if (d == NULL) {
		err_set(why, why_len, "seccomp: cannot list %s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s/status", dir, e->d_name);
		rc = task_locked(p, why, why_len);
		free(p);
		n++;
	}
	closedir(d);
	free(dir);
	if (rc == 0 && n == 0) {
		err_set(why, why_len, "seccomp: the kernel has no threads to check");
		rc = -1;
	}
	return rc;
}
