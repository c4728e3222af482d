/* kernelpid.c - see kernelpid.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernelpid.h"
#include "log.h"

static int
pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int
pidfd_signal(int fd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

/*
 * Parent and process group of `pid` from /proc/PID/stat. 0, or -1 with
 * errno (ENOENT: no such process).
 */
static int
read_stat(pid_t pid, pid_t *ppid, pid_t *pgrp)
{
	char path[64], text[1024];
	int ppid_v, pgrp_v;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	ssize_t n = read(fd, text, sizeof(text) - 1);
	int saved = errno;
	close(fd);
	if (n <= 0) {
		errno = n == 0 ? ENOENT : saved;
		return -1;
	}
	text[n] = '\0';
	/* The command name in parentheses may hold anything: fields follow the last ')'. */
	char *p = strrchr(text, ')');
	if (p == NULL || sscanf(p + 1, " %*c %d %d", &ppid_v, &pgrp_v) != 2) {
		errno = EPROTO;
		return -1;
	}
	*ppid = (pid_t)ppid_v;
	*pgrp = (pid_t)pgrp_v;
	return 0;
}

int
kernelpid_claim(pid_t pid, pid_t parent, int *pidfd, char *why, size_t why_len)
{
	pid_t ppid, pgrp;

	*pidfd = -1;
	int fd = pidfd_open(pid);
	if (fd == -1) {
		if (errno == ESRCH)
			return 0;
		snprintf(why, why_len, "cannot check kernel_pid %d: pidfd_open: %s", (int)pid,
			 strerror(errno));
		return -1;
	}
	if (read_stat(pid, &ppid, &pgrp) == -1) {
		int saved = errno;
		/* Gone between the two steps: the pidfd says so below. */
		if (saved == ENOENT || saved == ESRCH) {
			close(fd);
			return 0;
		}
		close(fd);
		snprintf(why, why_len, "cannot check kernel_pid %d: /proc/%d/stat: %s", (int)pid,
			 (int)pid, strerror(saved));
		return -1;
	}
	/*
	 * The pidfd was opened before the stat was read: if its process still
	 * lives now, the pid could not change hands in between, so what the
	 * stat said is about the process the pidfd pins.
	 */
	if (pidfd_signal(fd, 0) == -1 && errno == ESRCH) { /* EPERM: alive, not ours to signal */
		close(fd);
		return 0;
	}
	if (ppid != parent) {
		close(fd);
		snprintf(why, why_len,
			 "kernel_pid %d is not a child of the worker (its parent is %d)",
			 (int)pid, (int)ppid);
		return -1;
	}
	if (pgrp != pid) {
		close(fd);
		snprintf(why, why_len, "kernel_pid %d does not lead its own process group (%d)",
			 (int)pid, (int)pgrp);
		return -1;
	}
	*pidfd = fd;
	return 1;
}

void
kernelpid_kill(int pidfd, pid_t pid)
{
	if (pidfd == -1)
		return;
	/*
	 * While the kernel is not reaped, its pid is its own and so is the
	 * process group of that number: a session leader cannot leave its
	 * group, and only its own session's processes can join it. Once it is
	 * reaped, only what the pidfd pins is signalled (nothing).
	 */
	if ((pidfd_signal(pidfd, 0) == 0 || errno == EPERM) && kill(-pid, SIGKILL) == -1 &&
	    errno != ESRCH)
		log_warn("kill kernel process group %d", (int)pid);
	pidfd_signal(pidfd, SIGKILL);
}
