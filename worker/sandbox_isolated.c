/*
 * sandbox_isolated.c - kernel_network_mode isolated: the kernel gets its own
 * user, network, mount, pid and IPC namespaces. Its identity is mapped to root inside
 * only long enough to bring loopback up, mount a private tmpfs on /tmp,
 * /var/tmp, /dev/shm, /run and /var/run and on the daemon's state_dir and
 * runtime_dir, with only the directories it needs bound back
 * (sandbox_isolated_keep.c: so that it reaches no Unix socket of the
 * host's or the daemon's there, no other session's files, and nothing a
 * kernel leaves there reaches the next tenant of its uid) and cap the
 * user namespaces below at the one that follows: a second user namespace
 * nested in the first then maps the identity back to its own uid/gid, so
 * the kernel runs as itself, and sandbox_child() drops every capability
 * and sets no_new_privs before the exec. The network and mount namespaces
 * belong to the outer user namespace, in which the kernel holds nothing,
 * and it can make no user namespace of its own (user.max_user_namespaces),
 * hence no namespace of any kind, no mount and no chroot. It is pid 1 of a
 * pid namespace of its own with a /proc of that namespace, so it sees no
 * other kernel's process; the process the worker forked waits outside and
 * mirrors its end. With an egress socket (START's), it first forks the
 * forwarder (egress_forward.h) that serves 127.0.0.1:3128 of the kernel's
 * network namespace, outside the pid namespace. The child part runs in the
 * forked child: system calls only, no allocation.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_forward.h"
#include "sandbox.h"
#include "xmalloc.h"

/* The kernel gives loopback this index in every network namespace. */
#define LOOPBACK_IFINDEX 1

const char *const sandbox_private_dirs[SANDBOX_NPRIVATE] = {"/tmp", "/var/tmp", "/dev/shm", "/run",
							     "/var/run"};

/* Write text to /proc/self/<file>; 0 or -1 with errno. */
static int
proc_write(const char *file, const char *text)
{
	char path[64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		rc = -1;
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Map uid/gid inside the new user namespace to outer_uid/outer_gid, one id each. */
static int
write_maps(uid_t uid, gid_t gid, uid_t outer_uid, gid_t outer_gid)
{
	char map[64];

	/* An unprivileged gid_map needs setgroups denied first. */
	if (proc_write("setgroups", "deny") == -1)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)outer_uid);
	if (proc_write("uid_map", map) == -1)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)outer_gid);
	return proc_write("gid_map", map);
}

/* RTM_NEWLINK setting IFF_UP on loopback, and its acknowledgement. */
static int
loopback_up(void)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req;
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), rc = -1;

	if (fd == -1)
		return -1;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_NEWLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nh.nlmsg_seq = 1;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = LOOPBACK_IFINDEX;
	req.ifi.ifi_flags = IFF_UP;
	req.ifi.ifi_change = IFF_UP;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) !=
	    (ssize_t)sizeof(req))
		goto out;
	ssize_t n = recv(fd, &ack, sizeof(ack), 0);
	if (n < (ssize_t)sizeof(ack.nh) || ack.nh.nlmsg_type != NLMSG_ERROR) {
		errno = EPROTO;
		goto out;
	}
	if (ack.err.error != 0) {
		errno = -ack.err.error;
		goto out;
	}
	rc = 0;
out:
	if (rc == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
	} else {
		close(fd);
	}
	return rc;
}

/* mkdir -p path (mode 0755) in our namespace; 0 or -1 with errno. */
static int
mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s != 0)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		if (c == 0)
			return 0;
		*s = c;
	}
}

/* 1 if cover c of ln keeps something. */
static int
cover_keeps(const struct sandbox_launch *ln, int c)
{
	for (int i = 0; i < ln->n_keep; i++)
		if (ln->keep_under[i] == c)
			return 1;
	return 0;
}

/*
 * A private tmpfs on cover c, its kept directories bound back from the
 * descriptors fd[] opened before any of our mounts. A daemon's directory
 * that an outer cover hid already is made again only when something is
 * kept below it.
 */
static int
cover_one(const struct sandbox_launch *ln, int c, const int *fd)
{
	const char *dir = sandbox_cover_path(ln, c);
	char src[64];
	struct stat st;

	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		/* /var/run is mostly a link to /run: a mount would follow it there again. */
		if (c < SANDBOX_NPRIVATE || !cover_keeps(ln, c))
			return 0;
		if (mkdir_p(dir) == -1)
			return -1;
	}
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV,
		  c < SANDBOX_NPRIVATE ? "mode=1777" : "mode=0755") == -1)
		return -1;
	for (int i = 0; i < ln->n_keep; i++) {
		if (ln->keep_under[i] != c || fd[i] == -1)
			continue;
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd[i]);
		if (mkdir_p(ln->keep_path[i]) == -1 ||
		    mount(src, ln->keep_path[i], NULL, MS_BIND | MS_REC, NULL) == -1)
			return -1;
	}
	return 0;
}

/*
 * As root of the new user namespace, in the new mount namespace: each
 * cover (the private directories, then the daemon's, ancestors first)
 * gets its tmpfs and its kept directories back.
 */
static int
private_mounts(const struct sandbox_launch *ln)
{
	int fd[SANDBOX_KEEP_MAX], rc = 0;

	/* Nothing we mount may travel back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return -1;
	/* Opened in our new namespace: a bind mount takes its source from there only. */
	for (int i = 0; i < ln->n_keep; i++)
		fd[i] = open(ln->keep_path[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int c = 0; rc == 0 && c < SANDBOX_NPRIVATE + ln->n_hide_dir; c++)
		rc = cover_one(ln, c, fd);
	int saved = errno;
	for (int i = 0; i < ln->n_keep; i++)
		if (fd[i] != -1)
			close(fd[i]);
	errno = saved;
	return rc;
}

/* Allow one more user namespace below this one: the kernel's, and no other. */
static int
no_nested_userns(void)
{
	int fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd == -1)
		return -1;
	if (write(fd, "1", 1) != 1)
		rc = -1;
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* The kernel the waiter waits for, for forward(). */
static pid_t waited_kernel;

/* SIGUSR2 is the kernel's (the checkpoint before a kill): pass it on. */
static void
forward(int sig)
{
	int saved = errno;
	kill(waited_kernel, sig);
	errno = saved;
}

/*
 * The process the worker forked stays outside the new pid namespace: it
 * waits for the kernel, pid 1 inside, and ends as the kernel ended (the
 * worker reads the kernel's status from it, and signals it with its process
 * group, which the kernel shares). Never returns.
 */
static void __attribute__((noreturn))
wait_for_kernel(pid_t kernel)
{
	struct sigaction sa = {.sa_handler = SIG_IGN};
	struct rlimit none = {0, 0};
	int status;

	/* Our copy of the worker's exec-error pipe must close: it waits for EOF. */
	close_range(3, ~0U, 0);
	prctl(PR_SET_NAME, "codeexec-waiter", 0, 0, 0);
	/* Interrupts go to the process group: they are the kernel's. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	/* The worker signals us, not the kernel: we are its pid (kernel.h). */
	waited_kernel = kernel;
	sa.sa_handler = forward;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	while (waitpid(kernel, &status, 0) == -1)
		if (errno != EINTR)
			_exit(127);
	if (WIFSIGNALED(status)) {
		sa.sa_handler = SIG_DFL;
		sigaction(WTERMSIG(status), &sa, NULL);
		setrlimit(RLIMIT_CORE, &none);
		kill(getpid(), WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

/* Fork the kernel into a new pid namespace as its pid 1; returns there only. */
static int
enter_pid_namespace(int *stage)
{
	pid_t pid;

	if (unshare(CLONE_NEWPID) == -1 || (pid = fork()) == -1) {
		*stage = SANDBOX_STAGE_PIDNS;
		return -1;
	}
	if (pid > 0)
		wait_for_kernel(pid);
	/* pid 1: when the waiter goes, so does the kernel, and with it the namespace. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1) {
		*stage = SANDBOX_STAGE_PIDNS;
		return -1;
	}
	return 0;
}

/*
 * The kernel's way to the egress proxy: a forwarder in its network
 * namespace, forked before the pid namespace is made, so that the kernel
 * can neither see nor signal it. Its descriptors are not the kernel's
 * (close-on-exec, but closed here at once). 0, or -1.
 */
static int
start_forwarder(const struct sandbox_launch *ln)
{
	int fd = egress_forward_listen();

	if (fd == -1 || egress_forward_start(fd, ln->egress_dir, ln->egress_name) == -1) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	close(ln->egress_dir);
	return 0;
}

int
sandbox_isolated_child(const struct sandbox *sb, const struct sandbox_launch *ln, int *stage)
{
	uid_t uid = getuid();
	gid_t gid = getgid();

	(void)sb;
	/*
	 * The worker is not dumpable, which makes /proc/self/uid_map root's; we
	 * are about to exec the kernel, which is dumpable again anyway.
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1 ||
	    unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC) == -1) {
		*stage = SANDBOX_STAGE_USERNS;
		return -1;
	}
	if (write_maps(0, 0, uid, gid) == -1) {
		*stage = SANDBOX_STAGE_MAPS;
		return -1;
	}
	if (loopback_up() == -1) {
		*stage = SANDBOX_STAGE_LOOPBACK;
		return -1;
	}
	if (private_mounts(ln) == -1) {
		*stage = SANDBOX_STAGE_MOUNTS;
		return -1;
	}
	if (no_nested_userns() == -1) {
		*stage = SANDBOX_STAGE_NESTED;
		return -1;
	}
	if (ln->egress_dir >= 0 && start_forwarder(ln) == -1) {
		*stage = SANDBOX_STAGE_EGRESS;
		return -1;
	}
	/* A fresh /proc of its own pid namespace: no other kernel's process shows. */
	if (enter_pid_namespace(stage) == -1)
		return -1;
	/* Root's part is over: be uid/gid again, in a namespace that owns nothing. */
	if (unshare(CLONE_NEWUSER) == -1) {
		*stage = SANDBOX_STAGE_USERNS;
		return -1;
	}
	if (write_maps(uid, gid, 0, 0) == -1) {
		*stage = SANDBOX_STAGE_MAPS;
		return -1;
	}
	return 0;
}
