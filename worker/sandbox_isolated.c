/*
 * sandbox_isolated.c - kernel_network_mode isolated: the kernel gets its own
 * user, network, mount, pid and IPC namespaces. Its identity is mapped to root inside
 * only long enough to bring loopback up, mount a private tmpfs on /tmp,
 * /var/tmp, /dev/shm, /run and /var/run (so that it reaches no Unix socket
 * of the host's there, and nothing a kernel leaves there reaches the next
 * tenant of its uid, nor anything of another kernel this one) and cap the
 * user namespaces below at the one that follows: a second user namespace
 * nested in the first then maps the identity back to its own uid/gid, so
 * the kernel runs as itself, and sandbox_child() drops every capability
 * and sets no_new_privs before the exec. The network and mount namespaces
 * belong to the outer user namespace, in which the kernel holds nothing,
 * and it can make no user namespace of its own (user.max_user_namespaces),
 * hence no namespace of any kind, no mount and no chroot. It is pid 1 of a
 * pid namespace of its own with a /proc of that namespace, so it sees no
 * other kernel's process; the process the worker forked waits outside and
 * mirrors its end. The child part runs in the forked child: system calls
 * only, no allocation.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
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

#include "sandbox.h"
#include "xmalloc.h"

/* The kernel gives loopback this index in every network namespace. */
#define LOOPBACK_IFINDEX 1

const char *const sandbox_private_dirs[SANDBOX_NPRIVATE] = {"/tmp", "/var/tmp", "/dev/shm", "/run",
							     "/var/run"};

/* Keep the directory of private dir `d` that path lies in, if it does. */
static void
keep_if_under(const char *path, size_t len, struct sandbox_launch *ln)
{
	for (int d = 0; d < SANDBOX_NPRIVATE; d++) {
		size_t n = strlen(sandbox_private_dirs[d]);
		if (len <= n + 1 || strncmp(path, sandbox_private_dirs[d], n) != 0 || path[n] != '/')
			continue;
		size_t end = n + 1 + strcspn(path + n + 1, "/");
		if (end > len)
			end = len;
		char *keep = xasprintf("%.*s", (int)end, path);
		for (int i = 0; keep && i < ln->n_keep; i++)
			if (strcmp(ln->keep_path[i], keep) == 0) {
				free(keep);
				keep = NULL;
			}
		int dots = keep && (strcmp(keep + n + 1, ".") == 0 || strcmp(keep + n + 1, "..") == 0);
		struct stat st;
		if (keep == NULL || dots || ln->n_keep >= SANDBOX_KEEP_MAX || stat(keep, &st) == -1 ||
		    !S_ISDIR(st.st_mode)) {
			free(keep);
			return;
		}
		ln->keep_path[ln->n_keep] = keep;
		ln->keep_under[ln->n_keep++] = d;
		return;
	}
}

void
sandbox_isolated_prepare(char **argv, char **envp, const char *cwd, const char *runtime_dir,
			 struct sandbox_launch *ln)
{
	keep_if_under(cwd, strlen(cwd), ln);
	keep_if_under(runtime_dir, strlen(runtime_dir), ln);
	keep_if_under(argv[0], strlen(argv[0]), ln);
	/* The environment's paths (PATH, the asset cache...): each piece of a list. */
	for (char **e = envp; e && *e; e++) {
		const char *v = strchr(*e, '=');
		for (v = v ? v + 1 : NULL; v && *v; v += strcspn(v, ":") + (v[strcspn(v, ":")] != 0))
			if (*v == '/')
				keep_if_under(v, strcspn(v, ":"), ln);
	}
}

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

/*
 * As root of the new user namespace, in the new mount namespace: a private
 * tmpfs on each private directory, with the kept directories bound back.
 */
static int
private_mounts(const struct sandbox_launch *ln)
{
	char src[64];
	int fd[SANDBOX_KEEP_MAX], rc = 0;
	struct stat st;

	/* Nothing we mount may travel back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return -1;
	/* Opened in our new namespace: a bind mount takes its source from there only. */
	for (int i = 0; i < ln->n_keep; i++)
		fd[i] = open(ln->keep_path[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int d = 0; rc == 0 && d < SANDBOX_NPRIVATE; d++) {
		/* /var/run is mostly a link to /run: a mount would follow it there again. */
		if (lstat(sandbox_private_dirs[d], &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (mount("tmpfs", sandbox_private_dirs[d], "tmpfs", MS_NOSUID | MS_NODEV,
			  "mode=1777") == -1)
			rc = -1;
		for (int i = 0; rc == 0 && i < ln->n_keep; i++) {
			if (ln->keep_under[i] != d || fd[i] == -1)
				continue;
			snprintf(src, sizeof(src), "/proc/self/fd/%d", fd[i]);
			if ((mkdir(ln->keep_path[i], 0700) == -1 && errno != EEXIST) ||
			    mount(src, ln->keep_path[i], NULL, MS_BIND | MS_REC, NULL) == -1)
				rc = -1;
		}
	}
	for (int i = 0; i < ln->n_keep; i++)
		if (fd[i] != -1)
			close(fd[i]);
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

/* Fork the kernel into the new pid namespace as its pid 1; returns there only. */
static int
enter_pid_namespace(int *stage)
{
	pid_t pid = fork();

	if (pid == -1) {
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
	    unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) == -1) {
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
