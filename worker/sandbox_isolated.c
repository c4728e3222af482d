/*
 * sandbox_isolated.c - kernel_network_mode isolated: the kernel gets its own
 * user and network namespaces. Its identity is mapped to root inside only
 * long enough to bring loopback up: a second user namespace nested in the
 * first then maps it back to its own uid/gid, so the kernel runs as itself,
 * and sandbox_child() drops every capability and sets no_new_privs before
 * the exec. The network namespace belongs to the outer user namespace, in
 * which the kernel holds nothing. Runs in the forked child: system calls
 * only, no allocation.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox.h"

/* The kernel gives loopback this index in every network namespace. */
#define LOOPBACK_IFINDEX 1

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

int
sandbox_isolated_child(const struct sandbox *sb, int *stage)
{
	uid_t uid = getuid();
	gid_t gid = getgid();

	(void)sb;
	/*
	 * The worker is not dumpable, which makes /proc/self/uid_map root's; we
	 * are about to exec the kernel, which is dumpable again anyway.
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1 ||
	    unshare(CLONE_NEWUSER | CLONE_NEWNET) == -1) {
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
