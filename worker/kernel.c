/* kernel.c - see kernel.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "clock.h"
#include "kernel.h"
#include "log.h"
#include "rand.h"
#include "upstream_link.h"
#include "xmalloc.h"

#define KEY_BYTES 32
#define MAX_MSG_SIZE ((int64_t)64 * 1024 * 1024)
#define TAIL_MAX 2048
#define LINE_MAX_LOG 4000
/* How often kernel_info is resent while iopub is not yet subscribed... */
#define INFO_RESEND_S 0.1
/* ...and while the kernel has not answered at all. */
#define INFO_RETRY_S 0.2
#define SHUTDOWN_WAIT_MS 1000
/* Until the kernel binds, zmq retries connecting this often (default 100). */
#define RECONNECT_MS 20

int
kernel_runtime_create(const char *dir)
{
	if (mkdir(dir, 0700) == -1) {
		log_warn("mkdir %s", dir);
		return -1;
	}
	/* mkdir honours the umask; be sure of 0700 whatever it was. */
	if (chmod(dir, 0700) == -1) {
		log_warn("chmod %s", dir);
		return -1;
	}
	return 0;
}

void
kernel_runtime_remove(const char *dir)
{
	if (rmdir(dir) == -1 && errno != ENOENT)
		log_warn("rmdir %s", dir);
}

/*
 * A socket of `type` connected to <ip>-<port>, with our limits and routing
 * id `rid` (NULL: ZeroMQ's own). NULL on error.
 */
static void *
open_socket(struct kernel *k, void *zctx, int type, int port, const char *rid)
{
	int linger = 0, reconnect_ms = RECONNECT_MS, unlimited = 0;
	int64_t maxmsg = type == ZMQ_SUB ? KERNEL_IOPUB_MAX_MSG : MAX_MSG_SIZE;
	char *ep = xasprintf("ipc://%s-%d", k->ip, port);
	void *s = zmq_socket(zctx, type);

	/*
	 * iopub is PUB/SUB: a subscriber that falls 1000 messages behind (the
	 * default high-water marks) makes the kernel's PUB drop output without
	 * a trace. With no receive limit, ZeroMQ's I/O thread keeps reading
	 * whatever the kernel sends while our loop writes files and talks to
	 * the supervisor, so the kernel's queue never fills.
	 */
	if (s == NULL || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger)) == -1 ||
	    zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) == -1 ||
	    zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &reconnect_ms, sizeof(reconnect_ms)) == -1 ||
	    (type == ZMQ_SUB && zmq_setsockopt(s, ZMQ_RCVHWM, &unlimited, sizeof(unlimited)) == -1) ||
	    (type == ZMQ_SUB && zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0) == -1) ||
	    (rid && zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid)) == -1) ||
	    zmq_connect(s, ep) == -1) {
		log_warnx("zmq socket %s: %s", ep, zmq_strerror(zmq_errno()));
		if (s)
			zmq_close(s);
		s = NULL;
	}
	free(ep);
	return s;
}

/* Make the kernel struct and its paths; NULL with why if they cannot fit. */
static struct kernel *
kernel_alloc(const struct kernel_spec *spec, char *why, size_t why_len)
{
	struct sockaddr_un sun;
	struct kernel *k;

	/* An ipc endpoint is a Unix socket path: "<ip>-N" must fit in sun_path. */
	if (strlen(spec->runtime_dir) + strlen("/k-5") >= sizeof(sun.sun_path)) {
		err_set(why, why_len, "runtime_dir %s is too long for Unix socket paths",
			spec->runtime_dir);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->pid = -1;
	k->pidfd = -1;
	k->out_fd = -1;
	k->up_fd = -1;
	k->conn_fd = -1;
	k->dir_fd = -1;
	k->sb = spec->sb;
	k->ip = xasprintf("%s/k", spec->runtime_dir);
	buf_init(&k->out_line);
	buf_init(&k->out_tail);
	return k;
}

/*
 * spec's environment with, for each "NAME=PATH" of START's unix_fds, a
 * connection to PATH that the kernel inherits (in fds[*nfds], up to
 * SANDBOX_UNIX_FDS) and NAME=its number.
 * One that cannot be made is logged and left out: the kernel starts
 * without that sidecar rather than not at all. Caller owns the result.
 */
static char **
unix_fds_env(const struct kernel_spec *spec, int *fds, int *nfds)
{
	size_t n = 0, m = 0, k = 0;

	for (char **p = spec->envp; p && *p; p++)
		n++;
	for (char **p = spec->unix_fds; p && *p; p++)
		m++;
	char **env = xcalloc(n + m + 1, sizeof(*env));
	for (k = 0; k < n; k++)
		env[k] = xstrdup(spec->envp[k]);
	*nfds = 0;
	for (size_t j = 0; j < m && *nfds < SANDBOX_UNIX_FDS; j++) {
		const char *item = spec->unix_fds[j], *eq = strchr(item, '=');
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		int fd = -1;
		if (eq == NULL || strlen(eq + 1) >= sizeof(sun.sun_path) ||
		    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
			log_warnx("unix_fds item %s: not NAME=PATH, or no socket", item);
			continue;
		}
		memcpy(sun.sun_path, eq + 1, strlen(eq + 1));
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
			log_warn("connect %s for the kernel's %.*s", eq + 1, (int)(eq - item), item);
			close(fd);
			continue;
		}
		fds[(*nfds)++] = fd;
		env[k++] = xasprintf("%.*s=%d", (int)(eq - item), item, fd);
	}
	return env;
}

/* A new code mode line for `k`: the kernel's end, or -1 logged. */
static int
upstream_socketpair(struct kernel *k)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair for the kernel's code mode line");
		return -1;
	}
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1) {
		log_warn("O_NONBLOCK on the kernel's code mode line");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	k->up_fd = sv[0];
	buf_init(&k->up_in);
	return sv[1];
}

void
kernel_upstream_close(struct kernel *k)
{
	if (k->up_fd != -1)
		close(k->up_fd);
	k->up_fd = -1;
	buf_free(&k->up_in);
}

/*
 * `env` (consumed) with UPSTREAM_LINK_ENV naming the kernel's end of a new
 * code mode line, which joins fds[*nfds]; unchanged when there is no room
 * or no line (logged): the kernel starts without code mode rather than not.
 */
static char **
upstream_line(struct kernel *k, char **env, int *fds, int *nfds)
{
	size_t n = 0;
	int fd;

	if (*nfds >= SANDBOX_UNIX_FDS || (fd = upstream_socketpair(k)) == -1)
		return env;
	while (env[n])
		n++;
	env = xreallocarray(env, n + 2, sizeof(*env));
	env[n] = xasprintf("%s=%d", UPSTREAM_LINK_ENV, fd);
	env[n + 1] = NULL;
	fds[(*nfds)++] = fd;
	return env;
}

/* Spawn the process of k with its output pipe and pidfd; 0 or -1 with why. */
static int
kernel_launch(struct kernel *k, const struct kernel_spec *spec, char *why, size_t why_len)
{
	int op[2];
	struct sandbox_launch ln = {
		.n_cg_fds = 0, .pass_fd = -1, .ll_fd = -1, .sc_sock = {-1, -1}, .egress_dir = -1};
	char **argv = kernel_spawn_argv(spec->argv, k->conn_path);
	int fds[SANDBOX_UNIX_FDS], nfds;
	char **env = unix_fds_env(spec, fds, &nfds);

	if (spec->upstreams)
		env = upstream_line(k, env, fds, &nfds);

	int prepared = sandbox_cgroup_create(spec->sb, why, why_len) == 0 &&
		       sandbox_prepare(spec->sb, argv, env, spec->cwd, spec->runtime_dir, &ln,
				       why, why_len) == 0;
	/* After sandbox_prepare, which starts ln afresh; freeing ln closes them. */
	memcpy(ln.unix_fds, fds, sizeof(int) * (size_t)nfds);
	ln.n_unix_fds = nfds;
	/* The sandbox's own environment (seccomp's) copied it; else it is the kernel's. */
	if (ln.envp == NULL)
		ln.envp = env;
	else
		strv_free(env);
	if (!prepared) {
		if (ln.pass_fd >= 0)
			close(ln.pass_fd);
		sandbox_launch_free(&ln);
		strv_free(argv);
		return -1;
	}
	if (pipe2(op, O_CLOEXEC) == -1) {
		err_set(why, why_len, "cannot spawn the kernel: pipe: %s", strerror(errno));
		if (ln.pass_fd >= 0)
			close(ln.pass_fd);
		sandbox_launch_free(&ln);
		strv_free(argv);
		return -1;
	}
	k->pid = kernel_spawn(spec, &ln, argv, k->conn_fd, k->dir_fd, op[1], why, why_len);
	/* seccomp before the exec (sandbox_seccomp_gate.c): its listener came back on ln. */
	int gate_failed = k->pid != -1 && ln.sc_deny.filter &&
			  (k->gate = sandbox_seccomp_gate_open(&ln, why, why_len)) == NULL;
	/* The kernel has its copies; ours would only keep its key around. */
	close(k->conn_fd);
	k->conn_fd = -1;
	close(k->dir_fd);
	k->dir_fd = -1;
	if (ln.pass_fd >= 0)
		close(ln.pass_fd);
	sandbox_launch_free(&ln);
	strv_free(argv);
	close(op[1]);
	k->out_fd = op[0];
	if (k->pid == -1 || gate_failed)
		return -1;
	if (fcntl(k->out_fd, F_SETFL, O_NONBLOCK) == -1)
		log_warn("fcntl kernel output pipe");
	/* pidfds are always close-on-exec. */
	k->pidfd = (int)syscall(SYS_pidfd_open, k->pid, 0);
	if (k->pidfd == -1) {
		err_set(why, why_len, "pidfd_open %d: %s", (int)k->pid, strerror(errno));
		return -1;
	}
	log_debug("kernel %d started: %s", (int)k->pid, spec->argv[0]);
	return 0;
}

struct kernel *
kernel_start(const struct kernel_spec *spec, void *zctx, struct jupyter_session *sess,
	     char *why, size_t why_len)
{
	char key[2 * KEY_BYTES + 1];
	struct kernel *k = kernel_alloc(spec, why, why_len);

	if (k == NULL)
		return NULL;
	rand_hex(key, KEY_BYTES);
	k->signer = jupyter_signer_new(key, strlen(key));
	if (k->signer == NULL) {
		err_set(why, why_len, "cannot set up HMAC-SHA256 signing");
		goto fail;
	}
	/*
	 * The kernel binds its sockets through an inherited descriptor of
	 * runtime_dir, "/proc/self/fd/N/k": a short endpoint whatever the
	 * directory's length. xeus kernels read their bound endpoint back into
	 * 32 bytes, and ZeroMQ refuses a longer one with EINVAL (xeus-python
	 * aborted on "ipc:///var/run/codeexecd/k-.../k-1").
	 */
	k->dir_fd = open(spec->runtime_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (k->dir_fd == -1) {
		err_set(why, why_len, "open %s: %s", spec->runtime_dir, strerror(errno));
		goto fail;
	}
	char *kip = xasprintf("/proc/self/fd/%d/k", k->dir_fd);
	k->conn_fd = kernel_spawn_conn_file(kip, key, k->sb);
	free(kip);
	explicit_bzero(key, sizeof(key)); /* the signer holds its own copy */
	if (k->conn_fd == -1) {
		err_set(why, why_len, "cannot write the connection file");
		goto fail;
	}
	k->conn_path = xasprintf("/proc/self/fd/%d", k->conn_fd);
	if (kernel_launch(k, spec, why, why_len) == -1)
		goto fail;
	/* ipc connect works before the kernel binds: zmq retries until it does. */
	k->shell = open_socket(k, zctx, ZMQ_DEALER, KERNEL_PORT_SHELL, sess->id);
	k->control = open_socket(k, zctx, ZMQ_DEALER, KERNEL_PORT_CONTROL, NULL);
	k->iopub = open_socket(k, zctx, ZMQ_SUB, KERNEL_PORT_IOPUB, NULL);
	k->stdin_sock = open_socket(k, zctx, ZMQ_DEALER, KERNEL_PORT_STDIN, sess->id);
	if (!k->shell || !k->control || !k->iopub || !k->stdin_sock) {
		err_set(why, why_len, "cannot create the ZeroMQ sockets");
		goto fail;
	}
	sess->signer = k->signer;
	k->start_deadline = clock_mono() + spec->startup_timeout_s;
	k->next_info = clock_mono() + INFO_RETRY_S;
	if (jupyter_send(k->shell, sess, "kernel_info_request", NULL, NULL) == -1) {
		err_set(why, why_len, "cannot send kernel_info_request");
		goto fail;
	}
	return k;
fail:
	kernel_destroy(&k, sess, 0);
	return NULL;
}

/* Wait up to ms milliseconds for the kernel to exit; 1 if it did. */
static int
wait_exit(struct kernel *k, int ms)
{
	double end = clock_mono() + ms / 1000.0;
	struct pollfd p = {k->pidfd, POLLIN, 0};

	while (!kernel_reap(k)) {
		int left = (int)((end - clock_mono()) * 1000);
		if (left <= 0)
			return 0;
		if (poll(&p, 1, left) == -1 && errno != EINTR) {
			log_warn("poll kernel pidfd");
			return 0;
		}
	}
	return 1;
}

/* Remove the ipc socket files of k (the connection file has no name). */
static void
remove_files(struct kernel *k)
{
	if (k->conn_fd != -1)
		close(k->conn_fd);
	k->conn_fd = -1;
	if (k->dir_fd != -1)
		close(k->dir_fd);
	k->dir_fd = -1;
	for (int port = KERNEL_PORT_SHELL; port <= KERNEL_PORT_HB; port++) {
		char *p = xasprintf("%s-%d", k->ip, port);
		if (unlink(p) == -1 && errno != ENOENT)
			log_warn("unlink %s", p);
		free(p);
	}
}

/* SIGKILL the process group and wait for the kernel itself. */
static void
kill_and_reap(struct kernel *k)
{
	/* The zombie keeps its pid, so the group id cannot have been reused. */
	if (killpg(k->pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("kill process group %d", (int)k->pid);
	/* Descendants that left the process group are still in the cgroup. */
	if (k->sb && k->sb->cg)
		cgroup_kill_all(k->sb->cg);
	while (!k->reaped) {
		if (waitpid(k->pid, &k->wstatus, 0) == k->pid)
			k->reaped = 1;
		else if (errno != EINTR) {
			log_warn("waitpid %d", (int)k->pid);
			break;
		}
	}
}

/* Ask the kernel to shut down on control and give it a second. */
static void
shutdown_gently(struct kernel *k, struct jupyter_session *sess)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "restart", json_object_new_boolean(0));
	if (jupyter_send(k->control, sess, "shutdown_request", c, NULL) == 0)
		wait_exit(k, SHUTDOWN_WAIT_MS);
	json_object_put(c);
}

static void
close_socket(void **sp)
{
	if (*sp)
		zmq_close(*sp);
	*sp = NULL;
}

void
kernel_destroy(struct kernel **kp, struct jupyter_session *sess, int graceful)
{
	struct kernel *k = *kp;

	if (k == NULL)
		return;
	if (k->pid > 0 && !k->reaped) {
		if (graceful && k->control && k->pidfd != -1)
			shutdown_gently(k, sess);
		kill_and_reap(k);
	}
	sandbox_seccomp_gate_close(&k->gate);
	if (k->out_fd != -1)
		kernel_read_output(k); /* the kernel's last words, if any */
	close_socket(&k->shell);
	close_socket(&k->control);
	close_socket(&k->iopub);
	close_socket(&k->stdin_sock);
	if (k->pidfd != -1)
		close(k->pidfd);
	if (k->out_fd != -1)
		close(k->out_fd);
	kernel_upstream_close(k);
	remove_files(k);
	/* The session must not keep signing with a freed key. */
	if (sess->signer == k->signer)
		sess->signer = NULL;
	jupyter_signer_free(&k->signer);
	buf_free(&k->out_line);
	buf_free(&k->out_tail);
	free(k->conn_path);
	free(k->ip);
	free(k->language);
	free(k->language_version);
	free(k);
	*kp = NULL;
}

void
kernel_handshake_msg(struct kernel *k, const char *channel, const struct jupyter_msg *m)
{
	struct json_object *li = NULL, *name, *version;

	if (strcmp(channel, "iopub") == 0) {
		k->got_iopub = 1;
		return;
	}
	if (strcmp(m->msg_type, "kernel_info_reply") != 0 || k->got_info_reply)
		return;
	k->got_info_reply = 1;
	if (json_object_object_get_ex(m->content, "language_info", &li) &&
	    json_object_object_get_ex(li, "name", &name) &&
	    json_object_is_type(name, json_type_string))
		k->language = xstrdup(json_object_get_string(name));
	else
		k->language = xstrdup("unknown");
	if (li && json_object_object_get_ex(li, "version", &version) &&
	    json_object_is_type(version, json_type_string) &&
	    json_object_get_string_len(version) <= 200)
		k->language_version = xstrdup(json_object_get_string(version));
}

int
kernel_ready(const struct kernel *k)
{
	return k->got_info_reply && k->got_iopub;
}

double
kernel_handshake_tick(struct kernel *k, struct jupyter_session *sess, double now)
{
	if (now >= k->start_deadline)
		return -1;
	if (kernel_ready(k))
		return k->start_deadline - now;
	/*
	 * Resend until both the reply and a status on iopub (which proves the
	 * subscription is live, so no output is lost) have come. Requests sent
	 * before the kernel binds wait in the DEALER queue; extra replies are
	 * ignored.
	 */
	if (now >= k->next_info) {
		jupyter_send(k->shell, sess, "kernel_info_request", NULL, NULL);
		k->next_info = now + (k->got_info_reply ? INFO_RESEND_S : INFO_RETRY_S);
	}
	double left = k->start_deadline - now;
	if (k->next_info - now < left)
		left = k->next_info - now;
	return left > 0 ? left : 0;
}

int
kernel_reopen_iopub(struct kernel *k, void *zctx)
{
	close_socket(&k->iopub);
	k->iopub = open_socket(k, zctx, ZMQ_SUB, KERNEL_PORT_IOPUB, NULL);
	return k->iopub ? 0 : -1;
}

int
kernel_iopub_pending(struct kernel *k)
{
	int events = 0;
	size_t len = sizeof(events);

	return k->iopub && zmq_getsockopt(k->iopub, ZMQ_EVENTS, &events, &len) == 0 &&
	       (events & ZMQ_POLLIN);
}

void
kernel_interrupt(struct kernel *k, struct jupyter_session *sess, int by_message)
{
	if (by_message) {
		jupyter_send(k->control, sess, "interrupt_request", NULL, NULL);
		return;
	}
	/* Like jupyter_client: the whole group, so child processes stop too. */
	if (killpg(k->pid, SIGINT) == -1)
		log_warn("interrupt kernel %d", (int)k->pid);
}

/* Log one complete line of kernel output and keep it in the tail. */
static void
output_line(struct kernel *k, const char *line, size_t len)
{
	log_debug("kernel %d: %.*s", (int)k->pid, (int)(len > LINE_MAX_LOG ? LINE_MAX_LOG : len),
		  line);
	buf_add(&k->out_tail, line, len);
	buf_add(&k->out_tail, "\n", 1);
	if (k->out_tail.len > TAIL_MAX)
		buf_consume(&k->out_tail, k->out_tail.len - TAIL_MAX);
}

/* Emit every complete line held in out_line; all of it when `flush`. */
static void
output_lines(struct kernel *k, int flush)
{
	char *nl;

	while (k->out_line.len > 0 &&
	       (nl = memchr(k->out_line.data, '\n', k->out_line.len)) != NULL) {
		size_t n = (size_t)(nl - k->out_line.data);
		output_line(k, k->out_line.data, n);
		buf_consume(&k->out_line, n + 1);
	}
	if (k->out_line.len > 0 && (flush || k->out_line.len > LINE_MAX_LOG)) {
		output_line(k, k->out_line.data, k->out_line.len);
		buf_consume(&k->out_line, k->out_line.len);
	}
}

void
kernel_read_output(struct kernel *k)
{
	char chunk[4096];

	while (k->out_fd != -1) {
		ssize_t n = read(k->out_fd, chunk, sizeof(chunk));
		if (n > 0) {
			buf_add(&k->out_line, chunk, (size_t)n);
			output_lines(k, 0);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0)
			log_warn("read kernel output");
		output_lines(k, 1);
		close(k->out_fd);
		k->out_fd = -1;
	}
}

int
kernel_reap(struct kernel *k)
{
	siginfo_t info;

	if (k->reaped)
		return 1;
	/* Peek first: while it is a zombie its group id cannot be reused. */
	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, (id_t)k->pid, &info, WEXITED | WNOHANG | WNOWAIT) == -1) {
		log_warn("waitid %d", (int)k->pid);
		return 0;
	}
	if (info.si_pid == 0)
		return 0;
	kill_and_reap(k); /* its children (subprocesses) must not outlive it */
	return k->reaped;
}

char *
kernel_exit_text(const struct kernel *k)
{
	if (WIFSIGNALED(k->wstatus)) {
		int sig = WTERMSIG(k->wstatus);
		const char *abbrev = sigabbrev_np(sig);
		return xasprintf("kernel died: killed by signal %d (SIG%s)", sig,
				 abbrev ? abbrev : "?");
	}
	if (WIFEXITED(k->wstatus))
		return xasprintf("kernel exited with status %d", WEXITSTATUS(k->wstatus));
	return xasprintf("kernel ended with wait status %#x", (unsigned)k->wstatus);
}

const char *
kernel_output_tail(const struct kernel *k)
{
	return k->out_tail.data ? k->out_tail.data : "";
}
