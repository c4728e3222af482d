/*
 * cgroup_tree.c - ending and removing a control group with every group
 * below it; see cgroup_tree.h.
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup_fs.h"
#include "cgroup_tree.h"
#include "clock.h"
#include "log.h"
#include "xmalloc.h"

#define EMPTY_WAIT_MS 2000
#define FREEZE_WAIT_MS 1000

/* SIGKILL every process listed in dir/cgroup.procs; how many there were. */
static int
kill_listed(const char *dir)
{
	char procs[65536];
	int n = 0;

	if (cgroup_fs_read(dir, "cgroup.procs", procs, sizeof(procs)) == -1)
		return 0;
	for (char *t = strtok(procs, "\n"); t; t = strtok(NULL, "\n")) {
		pid_t pid = (pid_t)atol(t);
		if (pid > 0 && kill(pid, SIGKILL) == 0)
			n++;
	}
	return n;
}

/* Write state to a v1 freezer group and wait (bounded) until it holds. */
static void
v1_freeze(const char *dir, const char *state)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	char now[64];

	for (int i = 0; i < FREEZE_WAIT_MS / 10; i++) {
		/* FREEZING may need asking again once a busy task has stopped. */
		if (cgroup_fs_write(dir, "freezer.state", state) == -1 ||
		    cgroup_fs_read(dir, "freezer.state", now, sizeof(now)) == -1 ||
		    strncmp(now, state, strlen(state)) == 0)
			return;
		nanosleep(&ts, NULL);
	}
}

/*
 * Call fn(group, arg) on every group below dir, children before their
 * parent, then on dir; returns the sum of what fn returned. A kernel that
 * owns its group (the kernels of a daemon that never was root) can make
 * groups inside it and move processes there, so ending or removing a group
 * must cover its whole subtree. Only directories are entered, never links (lstat when
 * readdir does not say). The names of a level are read before descending,
 * so only one directory is open at a time however deep the tree.
 */
static int
walk_tree(const char *dir, int (*fn)(const char *group, void *arg), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **subs = NULL;
	size_t n = 0, cap = 0;
	int sum = 0;

	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *sub = xasprintf("%s/%s", dir, e->d_name);
		struct stat st;
		if (e->d_type != DT_DIR &&
		    (e->d_type != DT_UNKNOWN || lstat(sub, &st) == -1 || !S_ISDIR(st.st_mode))) {
			free(sub);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			subs = xreallocarray(subs, cap, sizeof(*subs));
		}
		subs[n++] = sub;
	}
	if (d)
		closedir(d);
	else if (errno != ENOENT)
		log_warn("cannot list control group %s", dir);
	for (size_t i = 0; i < n; i++) {
		sum += walk_tree(subs[i], fn, arg);
		free(subs[i]);
	}
	free(subs);
	return sum + fn(dir, arg);
}

/* walk_tree callbacks: kill a group's processes (how many), thaw a v1 freezer group. */
static int
kill_cb(const char *dir, void *arg)
{
	(void)arg;
	return kill_listed(dir);
}

static int
thaw_cb(const char *dir, void *arg)
{
	(void)arg;
	cgroup_fs_write(dir, "freezer.state", "THAWED");
	return 0;
}

/* Remove an emptied group, retrying while its killed processes leave, until *arg
 * (clock_mono() seconds). */
static int
rmdir_cb(const char *dir, void *arg)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	const double *deadline = arg;

	while (rmdir(dir) == -1 && errno == EBUSY && clock_mono() < *deadline)
		nanosleep(&ts, NULL);
	return 0;
}

void
cgroup_tree_kill(const char *dir, int version, int freezer)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	/* v2 (Linux 5.14+) kills the whole subtree at once, forks included. */
	if (version == 2 && cgroup_fs_write(dir, "cgroup.kill", "1") == 0)
		return;
	if (version == 1 && freezer) {
		/*
		 * The v1 freezer is hierarchical: freezing dir freezes every group
		 * below it, so nothing forks between reading the lists and the
		 * kill. A group below that froze itself stays frozen when dir
		 * thaws, its killed processes with it: thaw each one.
		 */
		v1_freeze(dir, "FROZEN");
		walk_tree(dir, kill_cb, NULL);
		walk_tree(dir, thaw_cb, NULL);
	}
	/* Repeat, since a process may fork while we read the lists. */
	for (int i = 0; i < EMPTY_WAIT_MS / 10 && walk_tree(dir, kill_cb, NULL) > 0; i++)
		nanosleep(&ts, NULL);
}

void
cgroup_tree_remove(const char *dir, int version, int freezer)
{
	double deadline;

	cgroup_tree_kill(dir, version, freezer);
	deadline = clock_mono() + EMPTY_WAIT_MS / 1000.0;
	walk_tree(dir, rmdir_cb, &deadline);
}

void
cgroup_tree_remove_below(const char *dir, int version, int freezer, int stale)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		char *sub = xasprintf("%s/%s", dir, e->d_name);
		cgroup_tree_remove(sub, version, freezer);
		if (stale)
			log_info("removed control group %s in %s, left by a previous instance",
				 e->d_name, dir);
		free(sub);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

