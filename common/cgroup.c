/*
 * cgroup.c - one kernel's group (see cgroup.h): make it owned like its
 * parent, set its limits, hand out its cgroup.procs, end and remove it.
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_fs.h"
#include "cgroup_tree.h"
#include "xmalloc.h"

#define CPU_PERIOD_US 100000

struct cgroup {
	char *dir[CGROUP_NCTL]; /* NULL when the controller is not used */
	int version[CGROUP_NCTL];
	uint64_t memory_mb;
};

/* The group's directory of controller c, shared with an earlier one on v2. */
static int
same_dir_before(const struct cgroup *g, int c)
{
	for (int i = 0; i < c; i++)
		if (g->dir[i] && strcmp(g->dir[i], g->dir[c]) == 0)
			return 1;
	return 0;
}

/* Set the limit of controller c in g; 0 or -1 with why. */
static int
set_limit(struct cgroup *g, int c, const struct cgroup_limits *lim, char *why, size_t why_len)
{
	char v[64];
	const char *file = NULL;
	int v2 = g->version[c] == 2;

	if (c == CGROUP_MEMORY) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_mb * 1024 * 1024);
		file = v2 ? "memory.max" : "memory.limit_in_bytes";
		if (cgroup_fs_write(g->dir[c], file, v) == -1)
			goto fail;
		/* Without swap limits, a kernel over its memory limit swaps instead. */
		file = v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
		if (cgroup_fs_write(g->dir[c], file, v2 ? "0" : v) == -1 && errno != ENOENT)
			goto fail;
		return 0;
	}
	if (c == CGROUP_PIDS) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->pids);
		file = "pids.max";
		if (cgroup_fs_write(g->dir[c], file, v) == -1)
			goto fail;
		return 0;
	}
	long quota = (long)(lim->cpu * CPU_PERIOD_US);
	if (quota < 1000)
		quota = 1000; /* the kernel's minimum */
	if (v2) {
		snprintf(v, sizeof(v), "%ld %d", quota, CPU_PERIOD_US);
		file = "cpu.max";
		if (cgroup_fs_write(g->dir[c], file, v) == -1)
			goto fail;
		return 0;
	}
	snprintf(v, sizeof(v), "%d", CPU_PERIOD_US);
	file = "cpu.cfs_period_us";
	if (cgroup_fs_write(g->dir[c], file, v) == -1)
		goto fail;
	snprintf(v, sizeof(v), "%ld", quota);
	file = "cpu.cfs_quota_us";
	if (cgroup_fs_write(g->dir[c], file, v) == -1)
		goto fail;
	return 0;
fail:
	err_set(why, why_len, "cannot set %s/%s: %s", g->dir[c], file, strerror(errno));
	return -1;
}

/* 1 if limit lim asks for controller c. */
static int
wants(const struct cgroup_limits *lim, int c)
{
	if (c == CGROUP_MEMORY)
		return lim->memory_mb > 0;
	if (c == CGROUP_PIDS)
		return lim->pids > 0;
	if (c == CGROUP_CPU)
		return lim->cpu > 0;
	return 0; /* freezer holds every kernel but limits nothing */
}

int
cgroup_check_limits(const struct cgroup_layout *l, const struct cgroup_limits *lim, char *why,
		    size_t why_len)
{
	static const char *const keys[CGROUP_NLIMIT] = {"limits.memory_mb", "limits.pids",
							"limits.cpu"};
	size_t used = 0;

	if (why_len > 0)
		why[0] = '\0';
	for (int c = 0; c < CGROUP_NLIMIT; c++) {
		if (!wants(lim, c) || l->version[c] != 0)
			continue;
		int n = snprintf(why + used, why_len - used, "%s%s cannot be enforced: %s",
				 used ? "; " : "", keys[c], l->reason[c]);
		if (n > 0 && (size_t)n < why_len - used)
			used += (size_t)n;
		else
			used = why_len - 1;
	}
	return used ? -1 : 0;
}

/*
 * Give the group dir (just made, in parent) and every file in it to the
 * owner of parent, if that is not us. mkdir gives a group to the worker's
 * uid; where the supervisor kept the parent root's because kernels share
 * that uid (cgroup_seal), the group must be root's too, or a kernel could
 * write its cgroup.procs and tasks or make groups in it. Needs CAP_CHOWN
 * (privdrop.c). 0, or -1 with why.
 */
static int
own_like_parent(const char *dir, const char *parent, char *why, size_t why_len)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (stat(parent, &st) == -1) {
		err_set(why, why_len, "stat %s: %s", parent, strerror(errno));
		return -1;
	}
	if (st.st_uid == geteuid())
		return 0;
	if ((d = opendir(dir)) == NULL) {
		err_set(why, why_len, "open %s: %s", dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fchownat(dirfd(d), e->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) == -1) {
			err_set(why, why_len, "chown %s/%s: %s", dir, e->d_name, strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	if (rc == 0 && lchown(dir, st.st_uid, st.st_gid) == -1) {
		err_set(why, why_len, "chown %s: %s", dir, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* Make g's directory of controller c for the group `name`; 0 or -1 with why. */
static int
make_dir(struct cgroup *g, const struct cgroup_layout *l, int c, const char *name, char *why,
	 size_t why_len)
{
	char err[ERR_LEN];

	g->version[c] = l->version[c];
	g->dir[c] = xasprintf("%s/%s", l->parent[c], name);
	if (same_dir_before(g, c))
		return 0;
	if (mkdir(g->dir[c], 0755) == -1 && errno != EEXIST) {
		err_set(why, why_len, "mkdir %s: %s", g->dir[c], strerror(errno));
		return -1;
	}
	if (own_like_parent(g->dir[c], l->parent[c], err, sizeof(err)) == -1) {
		err_set(why, why_len, "cannot keep the control group as its parent's owner's: %s",
			err);
		return -1;
	}
	return 0;
}

struct cgroup *
cgroup_create(const struct cgroup_layout *l, const char *name, const struct cgroup_limits *lim,
	      char *why, size_t why_len)
{
	struct cgroup *g = xcalloc(1, sizeof(*g));
	int any = 0;

	if (!cgroup_fs_name_ok(name)) {
		err_set(why, why_len, "bad cgroup name \"%s\"", name);
		goto fail;
	}
	g->memory_mb = lim->memory_mb;
	for (int c = 0; c < CGROUP_NLIMIT; c++) {
		if (!wants(lim, c))
			continue;
		if (l->version[c] == 0) {
			err_set(why, why_len,
				"limits.%s cannot be enforced: no usable %s controller",
				c == CGROUP_MEMORY ? "memory_mb" : cgroup_ctl_name(c),
				cgroup_ctl_name(c));
			goto fail;
		}
		if (make_dir(g, l, c, name, why, why_len) == -1)
			goto fail;
		any = 1;
	}
	/* Limits or not, the kernel lives in a group that ends it whole. */
	if (l->version[CGROUP_FREEZER]) {
		if (make_dir(g, l, CGROUP_FREEZER, name, why, why_len) == -1)
			goto fail;
	} else {
		for (int c = 0; !any && c < CGROUP_NLIMIT; c++) {
			if (l->version[c] == 0)
				continue;
			if (make_dir(g, l, c, name, why, why_len) == -1)
				goto fail;
			any = 1;
		}
	}
	/* A group left by a crashed worker may still hold its kernel. */
	cgroup_kill_all(g);
	for (int c = 0; c < CGROUP_NLIMIT; c++)
		if (g->dir[c] && wants(lim, c) && set_limit(g, c, lim, why, why_len) == -1)
			goto fail;
	return g;
fail:
	cgroup_destroy(&g);
	return NULL;
}

int
cgroup_procs_fds(const struct cgroup *g, int *fds, char *why, size_t why_len)
{
	int n = 0;

	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (g->dir[c] == NULL || same_dir_before(g, c))
			continue;
		char *p = xasprintf("%s/cgroup.procs", g->dir[c]);
		fds[n] = open(p, O_WRONLY | O_CLOEXEC);
		if (fds[n] == -1) {
			err_set(why, why_len, "open %s: %s", p, strerror(errno));
			free(p);
			while (n > 0)
				close(fds[--n]);
			return -1;
		}
		free(p);
		n++;
	}
	return n;
}

void
cgroup_kill_all(struct cgroup *g)
{
	/* The freezer's group first: it ends everything at once. */
	if (g->dir[CGROUP_FREEZER])
		cgroup_tree_kill(g->dir[CGROUP_FREEZER], g->version[CGROUP_FREEZER], 1);
	for (int c = 0; c < CGROUP_NLIMIT; c++)
		if (g->dir[c] && !same_dir_before(g, c))
			cgroup_tree_kill(g->dir[c], g->version[c], 0);
}

unsigned long
cgroup_oom_kills(const struct cgroup *g)
{
	char text[4096];
	const char *dir = g->dir[CGROUP_MEMORY];
	const char *file = g->version[CGROUP_MEMORY] == 2 ? "memory.events" : "memory.oom_control";

	if (dir == NULL || cgroup_fs_read(dir, file, text, sizeof(text)) == -1)
		return 0;
	char *p = strstr(text, "oom_kill ");
	return p ? strtoul(p + strlen("oom_kill "), NULL, 10) : 0;
}

void
cgroup_destroy(struct cgroup **gp)
{
	struct cgroup *g = *gp;

	if (g == NULL)
		return;
	cgroup_kill_all(g);
	for (int c = CGROUP_NCTL - 1; c >= 0; c--)
		if (g->dir[c] && !same_dir_before(g, c))
			cgroup_tree_remove(g->dir[c], g->version[c], c == CGROUP_FREEZER);
	for (int c = 0; c < CGROUP_NCTL; c++)
		free(g->dir[c]);
	free(g);
	*gp = NULL;
}

int
cgroup_remove_named(const struct cgroup_layout *l, const char *name)
{
	struct cgroup *g;
	int found = 0;

	if (!cgroup_fs_name_ok(name))
		return 0;
	g = xcalloc(1, sizeof(*g));
	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0 || l->parent[c] == NULL)
			continue;
		char *dir = xasprintf("%s/%s", l->parent[c], name);
		/* AT_EACCESS: a supervisor of `user` reaches a sealed parent by CAP_DAC_OVERRIDE. */
		if (faccessat(AT_FDCWD, dir, F_OK, AT_EACCESS) == 0) {
			g->dir[c] = dir;
			g->version[c] = l->version[c];
			found = 1;
		} else {
			free(dir);
		}
	}
	cgroup_destroy(&g);
	return found;
}
