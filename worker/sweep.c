/* sweep.c - see sweep.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cap-ng.h>

#include "log.h"
#include "fs_tree.h"
#include "sandbox_steps.h"
#include "sweep.h"

/* How long the processes of a uid get to die. */
#define KILL_WAIT_MS 5000
/* Directories deeper than this below /tmp are not searched. */
#define MAX_DEPTH 16

/* The places every uid may write to, and so where a tenant leaves files. */
static const char *const shared_dirs[] = {"/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue"};

/* System V IPC: /proc/sysvipc/<file>, the columns of id, uid and cuid. */
static const struct {
	const char *file;
	int id_col, uid_col, cuid_col;
} ipc_tables[] = {
	{"shm", 1, 7, 9},
	{"sem", 1, 4, 6},
	{"msg", 1, 7, 9},
};

/* 1 if a process other than us runs, not a zombie, with real or saved uid `uid`. */
static int
alive_of(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d)) != NULL) {
		char path[300], text[2048];
		unsigned r, eff, saved;
		if (atoi(e->d_name) <= 0 || atoi(e->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd == -1 ? -1 : read(fd, text, sizeof(text) - 1);
		if (fd != -1)
			close(fd);
		if (n <= 0)
			continue;
		text[n] = '\0';
		const char *st = strstr(text, "\nState:\t"), *u = strstr(text, "\nUid:\t");
		if (st == NULL || u == NULL || sscanf(u, "\nUid:\t%u\t%u\t%u", &r, &eff, &saved) != 3)
			continue;
		if ((r == uid || saved == uid) && st[8] != 'Z' && st[8] != 'X')
			found = 1;
	}
	if (d)
		closedir(d);
	return found;
}

/* kill(-1, SIGKILL) as uid until no process of it lives; 0 or -1. */
static int
kill_all_of(uid_t uid)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (int i = 0; i < KILL_WAIT_MS / 10; i++) {
		/* ESRCH: nothing we may signal is left, zombies included. */
		if (kill(-1, SIGKILL) == -1 && errno == ESRCH)
			return 0;
		if (!alive_of(uid))
			return 0; /* zombies only: their parents reap them */
		nanosleep(&ts, NULL);
	}
	log_warnx("uid %u: processes still alive %d ms after SIGKILL", (unsigned)uid,
		  KILL_WAIT_MS);
	return -1;
}

/* 1 if uid/gid may create entries in a directory of this stat. */
static int
writable_by(const struct stat *st, uid_t uid, gid_t gid)
{
	if (st->st_uid == uid)
		return 1;
	if (st->st_gid == gid)
		return (st->st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
	return (st->st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}

/*
 * Remove what uid owns under the open directory dfd (closed here); descend
 * into directories it could have written to. How many entries it still owns.
 */
static int
sweep_dir(int dfd, uid_t uid, gid_t gid, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int left = 0;

	if (d == NULL) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (st.st_uid == uid) {
			fs_remove_tree_at(dirfd(d), e->d_name);
			left += fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		} else if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH && writable_by(&st, uid, gid)) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub != -1)
				left += sweep_dir(sub, uid, gid, depth + 1);
		}
	}
	closedir(d);
	return left;
}

/* Remove the System V IPC objects uid owns or made; how many are left. */
static int
sweep_ipc(uid_t uid)
{
	int left = 0;

	for (size_t t = 0; t < sizeof(ipc_tables) / sizeof(ipc_tables[0]); t++) {
		char path[64], line[512];
		snprintf(path, sizeof(path), "/proc/sysvipc/%s", ipc_tables[t].file);
		FILE *f = fopen(path, "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f)) {
			long col[12] = {0};
			int n = 0;
			for (char *tok = strtok(line, " \t\n"); tok && n < 12; tok = strtok(NULL, " \t\n"))
				col[n++] = strtol(tok, NULL, 10);
			if (n <= ipc_tables[t].cuid_col ||
			    ((uid_t)col[ipc_tables[t].uid_col] != uid &&
			     (uid_t)col[ipc_tables[t].cuid_col] != uid))
				continue; /* the header, or another uid's */
			int id = (int)col[ipc_tables[t].id_col], rc;
			if (t == 0)
				rc = shmctl(id, IPC_RMID, NULL);
			else if (t == 1)
				rc = semctl(id, 0, IPC_RMID);
			else
				rc = msgctl(id, IPC_RMID, NULL);
			left += rc == -1 && errno != EINVAL && errno != EIDRM;
		}
		fclose(f);
	}
	return left;
}

/* In a child: become uid, kill its processes, remove its files. Exit status. */
static int
sweep_one(uid_t uid)
{
	gid_t gid = (gid_t)uid;
	int rc = 0;

	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1) {
		log_warn("sweep: cannot become uid %u", (unsigned)uid);
		return 1;
	}
	/* A change between two non-zero uids keeps our capabilities: drop them first. */
	if (sandbox_drop_caps() == -1) {
		log_warn("sweep: cannot drop capabilities as uid %u", (unsigned)uid);
		return 1;
	}
	capng_get_caps_process();
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE) {
		log_warnx("sweep: uid %u still holds capabilities; not killing", (unsigned)uid);
		return 1;
	}
	if (kill_all_of(uid) == -1)
		rc = 1;
	if (sweep_ipc(uid) > 0) {
		log_warnx("sweep: System V IPC objects of uid %u remain", (unsigned)uid);
		rc = 1;
	}
	for (size_t i = 0; i < sizeof(shared_dirs) / sizeof(shared_dirs[0]); i++) {
		int fd = open(shared_dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int left = fd == -1 ? 0 : sweep_dir(fd, uid, gid, 0);
		if (left > 0) {
			log_warnx("sweep: %d entries of uid %u remain in %s", left, (unsigned)uid,
				  shared_dirs[i]);
			rc = 1;
		}
	}
	return rc;
}

int
sweep_main(const char *range)
{
	char *end;
	unsigned long a = strtoul(range, &end, 10), b = a;
	int rc = 0;

	if (*end == '-')
		b = strtoul(end + 1, &end, 10);
	if (*end != '\0' || a == 0 || b < a || b > 0xfffffffeUL) {
		log_warnx("sweep: bad uid range \"%s\" (want FIRST or FIRST-LAST, not 0)", range);
		return 2;
	}
	for (unsigned long uid = a; uid <= b; uid++) {
		int status;
		pid_t pid = fork();
		if (pid == -1) {
			log_warn("sweep: fork for uid %lu", uid);
			return 1;
		}
		if (pid == 0)
			_exit(sweep_one((uid_t)uid));
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = 1;
	}
	return rc;
}
