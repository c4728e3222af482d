/*
 * sandbox_seccomp_lock.c - kernel_network_mode seccomp, once the kernel is
 * ready: the code the worker runs in it to make it install its filter
 * (lock(), kept by the isolated startup of sandbox_seccomp.c), and the
 * check from outside that every thread of the kernel is locked.
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "xmalloc.h"

static const char lock_code[] = "__import__('_codeexecd_seccomp').lock()";

const char *
sandbox_seccomp_lock_code(void)
{
	return lock_code;
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
