/*
 * sandbox_seccomp.c - kernel_network_mode seccomp for the daemon's own
 * ipykernel: an isolated Python startup over an immutable environment (the
 * rule is sandbox_immutable.c's), then a seccomp filter the kernel installs
 * on itself when the worker says it is ready (sandbox_seccomp_lock.c). This
 * file builds the startup. Every other kernel is filtered from its exec on
 * instead (sandbox_seccomp_gate.c).
 *
 * Why from inside: seccomp filters only ever apply to the calling thread
 * (and, with TSYNC, its siblings); nothing outside can install one on a
 * running process. The filter cannot be installed before exec either,
 * because ZeroMQ and Jupyter need sockets while they start. So the startup
 * below (our code, passed with -c, nothing read from disk but validated
 * roots) loads codeexec-seccomp.so from beside the worker and keeps a
 * lock() the worker runs silently once the handshake is done, before READY
 * (lifecycle.c). The worker then checks /proc/PID/task/\*\/status from the
 * outside: a kernel that did not lock itself is killed.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
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
#include "sandbox_immutable.h"
#include "sandbox_steps.h"
#include "session_pkgs.h"
#include "xmalloc.h"

#define HELPER_NAME "codeexec-seccomp.so"
#define QUERY_TIMEOUT_MS 20000

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
 * a former kernel of this session may have left modules there; so do the
 * session's own packages, and pip learns their directory then.
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
	/* The session's packages (session_pkgs.h), for imports and for pip. */
	"        pk = os.path.join(os.getcwd(), '" SESSION_PKGS_DIR "')\n"
	"        sys.path.insert(0, pk)\n"
	"        os.environ['PIP_TARGET'] = os.environ['PYTHONPATH'] = pk\n"
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
sandbox_seccomp_locks_itself(char **argv)
{
	if (argv[0] == NULL || argv[1] == NULL || argv[2] == NULL)
		return 0;
	if (strcmp(argv[1], "-m") == 0)
		return strcmp(argv[2], "ipykernel_launcher") == 0 || strcmp(argv[2], "ipykernel") == 0;
	return strcmp(argv[1], "-c") == 0 && strstr(argv[2], "from ipykernel import kernelapp");
}

int
sandbox_seccomp_prepare(struct sandbox *sb, char **argv, char **envp, const char *cwd,
			const char *runtime_dir, struct sandbox_launch *ln, char *why, size_t why_len)
{
	struct sandbox_ident id;
	struct json_object *rep = NULL, *roots, *cfg;
	const char *python = argv[0];

	sandbox_immutable_ident(&id, sb->has_id, sb->uid, sb->gid);
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
	if (sandbox_immutable_env(envp, &id, why, why_len) == -1 ||
	    sandbox_immutable_path(python, &id, why, why_len) == -1 ||
	    sandbox_immutable_path(sb->helper, &id, why, why_len) == -1)
		return -1;
	if ((rep = query_paths(sb, python, envp, why, why_len)) == NULL)
		return -1;
	int rc = -1;
	if (sandbox_immutable_array(rep, "path", &id, why, why_len) == -1 ||
	    sandbox_immutable_array(rep, "roots", &id, why, why_len) == -1)
		goto out;
	if (json_object_object_get_ex(rep, "cfg", &cfg) && json_object_is_type(cfg, json_type_string) &&
	    sandbox_immutable_path(json_object_get_string(cfg), &id, why, why_len) == -1)
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
