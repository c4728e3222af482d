/* cgroup.c - see cgroup.h. */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "err.h"
#include "log.h"
#include "xmalloc.h"

#define CPU_PERIOD_US 100000
#define EMPTY_WAIT_MS 2000
#define FREEZE_WAIT_MS 1000

struct cgroup {
	char *dir[CGROUP_NCTL]; /* NULL when the controller is not used */
	int version[CGROUP_NCTL];
	uint64_t memory_mb;
};

static const char *const ctl_names[CGROUP_NCTL] = {"memory", "pids", "cpu", "freezer"};

const char *
cgroup_ctl_name(enum cgroup_ctl c)
{
	return ctl_names[c];
}

/* Write the string s to dir/file; 0, or -1 with errno. */
static int
write_file(const char *dir, const char *file, const char *s)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC), rc = -1;

	free(p);
	if (fd == -1)
		return -1;
	size_t len = strlen(s);
	if (write(fd, s, len) == (ssize_t)len)
		rc = 0;
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Read dir/file (small) into out; 0, or -1 with errno. */
static int
read_file(const char *dir, const char *file, char *out, size_t size)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	if (fd == -1)
		return -1;
	ssize_t n = read(fd, out, size - 1);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	out[n] = '\0';
	return 0;
}

/*
 * The mount point of the hierarchy of fstype "cgroup2", or of the v1
 * hierarchy carrying controller `ctl`. Caller frees; NULL if none.
 */
static char *
find_mount(const char *fstype, const char *ctl)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *found = NULL;

	if (f == NULL)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		/* id parent dev root mountpoint opts [optional...] - fstype source superopts */
		char root[1024], mnt[1024], type[64], super[1024];
		char *dash = strstr(line, " - ");
		if (dash == NULL || sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", type, super) != 2)
			continue;
		if (strcmp(type, fstype) != 0 || strcmp(root, "/") != 0)
			continue;
		if (ctl) {
			/* superopts is a comma list: rw,relatime,cpu,cpuacct */
			int has = 0;
			for (char *t = strtok(super, ","); t; t = strtok(NULL, ","))
				has |= strcmp(t, ctl) == 0;
			if (!has)
				continue;
		}
		found = xstrdup(mnt);
	}
	fclose(f);
	return found;
}

/*
 * Our own group in the hierarchy listing `ctl` in /proc/self/cgroup (NULL:
 * the v2 line "0::"). Caller frees; NULL if absent.
 */
static char *
own_group(const char *ctl)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096], *found = NULL;

	if (f == NULL)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 == NULL)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*c2 = '\0';
		const char *list = c1 + 1;
		if (ctl == NULL) {
			if (strcmp(line, "0") == 0 && *list == '\0')
				found = xstrdup(c2 + 1);
			continue;
		}
		char *dup = xstrdup(list), *save = NULL;
		for (char *t = strtok_r(dup, ",", &save); t && !found; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, ctl) == 0)
				found = xstrdup(c2 + 1);
		free(dup);
	}
	fclose(f);
	return found;
}

/* 1 if the space-separated list contains word. */
static int
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return 1;
	return 0;
}

/* Move every process of dir to dir/daemon (v2's no-internal-process rule). */
static int
v2_move_to_leaf(const char *dir)
{
	char procs[65536];
	char *leaf = xasprintf("%s/daemon", dir);
	int rc = -1;

	if (mkdir(leaf, 0755) == -1 && errno != EEXIST)
		goto out;
	if (read_file(dir, "cgroup.procs", procs, sizeof(procs)) == -1)
		goto out;
	rc = 0;
	for (char *t = strtok(procs, "\n"); t && rc == 0; t = strtok(NULL, "\n"))
		if (write_file(leaf, "cgroup.procs", t) == -1 && errno != ESRCH)
			rc = -1;
out:
	free(leaf);
	return rc;
}

/* Enable the controllers named in `want` below dir; 0 or -1 with errno. */
static int
v2_enable(const char *dir, const char *want)
{
	return write_file(dir, "cgroup.subtree_control", want);
}

/* Prepare D/kernels on cgroup v2 for the controllers D has. */
static void
probe_v2(struct cgroup_layout *l)
{
	char ctls[512], want[64] = "";
	char *mnt = find_mount("cgroup2", NULL), *own = own_group(NULL), *dir = NULL;
	char *kern = NULL;
	const char *why = NULL;

	if (mnt == NULL || own == NULL) {
		why = "no cgroup v2 hierarchy is mounted";
		goto out;
	}
	dir = xasprintf("%s%s", mnt, strcmp(own, "/") == 0 ? "" : own);
	if (read_file(dir, "cgroup.controllers", ctls, sizeof(ctls)) == -1) {
		why = "the daemon's cgroup v2 group cannot be read";
		goto out;
	}
	for (int c = 0; c < CGROUP_NLIMIT; c++)
		if (has_word(ctls, ctl_names[c]))
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s+%s",
				 *want ? " " : "", ctl_names[c]);
	if (*want == '\0') {
		why = "the cgroup v2 hierarchy has no memory, pids or cpu controller here";
		goto out;
	}
	kern = xasprintf("%s/kernels", dir);
	if ((strcmp(own, "/") != 0 && v2_move_to_leaf(dir) == -1) || v2_enable(dir, want) == -1 ||
	    (mkdir(kern, 0755) == -1 && errno != EEXIST) || v2_enable(kern, want) == -1) {
		why = "the daemon's cgroup v2 group is not delegated to it (not writable)";
		goto out;
	}
	for (int c = 0; c < CGROUP_NLIMIT; c++) {
		if (!has_word(ctls, ctl_names[c]))
			continue;
		l->version[c] = 2;
		l->parent[c] = xstrdup(kern);
	}
	/* cgroup.kill and cgroup.freeze are core files of every v2 group. */
	l->version[CGROUP_FREEZER] = 2;
	l->parent[CGROUP_FREEZER] = xstrdup(kern);
out:
	for (int c = 0; c < CGROUP_NCTL; c++)
		if (l->version[c] == 0)
			snprintf(l->reason[c], sizeof(l->reason[c]), "%s",
				 why ? why : "the cgroup v2 hierarchy lacks this controller");
	free(mnt);
	free(own);
	free(dir);
	free(kern);
}

/* 1 if name is all digits: the pid an instance's parent is named after. */
static int
is_pid_name(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return *name != '\0';
}

static void remove_dir(const char *dir, int version, int freezer);

/* Kill and remove every group below dir, then dir itself; `stale`: log each. */
static void
remove_children_and_dir(const char *dir, int version, int freezer, int stale)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		char *sub = xasprintf("%s/%s", dir, e->d_name);
		remove_dir(sub, version, freezer);
		if (stale)
			log_info("removed control group %s in %s, left by a previous instance",
				 e->d_name, dir);
		free(sub);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/*
 * In codeexecd/ of a v1 hierarchy: the parents of daemons whose pid is gone
 * (a daemon killed outright) are killed and removed. Other names (the
 * "probe" parent of `codeexec-worker -p`) are left alone.
 */
static void
remove_stale_instances(const char *top, const char *instance, int freezer)
{
	DIR *d = opendir(top);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, instance) == 0)
			continue;
		if (!is_pid_name(e->d_name) || kill((pid_t)atol(e->d_name), 0) == 0 ||
		    errno != ESRCH)
			continue;
		char *sub = xasprintf("%s/%s", top, e->d_name);
		remove_children_and_dir(sub, 1, freezer, 1);
		free(sub);
	}
	if (d)
		closedir(d);
}

/* Prepare G/codeexecd/<instance> in the v1 hierarchy of controller c. */
static void
probe_v1(struct cgroup_layout *l, int c, const char *instance)
{
	char *mnt = find_mount("cgroup", ctl_names[c]), *own = own_group(ctl_names[c]);

	if (mnt == NULL || own == NULL) {
		snprintf(l->reason[c] + strlen(l->reason[c]),
			 sizeof(l->reason[c]) - strlen(l->reason[c]),
			 "; no cgroup v1 %s hierarchy is mounted", ctl_names[c]);
	} else {
		char *top = xasprintf("%s%s/codeexecd", mnt, strcmp(own, "/") == 0 ? "" : own);
		char *dir = xasprintf("%s/%s", top, instance);
		if ((mkdir(top, 0755) == 0 || errno == EEXIST) &&
		    (remove_stale_instances(top, instance, c == CGROUP_FREEZER),
		     mkdir(dir, 0755) == 0 || errno == EEXIST)) {
			l->version[c] = 1;
			l->parent[c] = dir;
			l->reason[c][0] = '\0';
		} else {
			snprintf(l->reason[c] + strlen(l->reason[c]),
				 sizeof(l->reason[c]) - strlen(l->reason[c]),
				 "; cgroup v1: mkdir %s: %s", dir, strerror(errno));
			free(dir);
		}
		free(top);
	}
	free(mnt);
	free(own);
}

int
cgroup_probe(struct cgroup_layout *l, const char *instance)
{
	int n = 0;

	memset(l, 0, sizeof(*l));
	probe_v2(l);
	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0)
			probe_v1(l, c, instance);
		n += l->version[c] != 0;
	}
	return n;
}

void
cgroup_layout_free(struct cgroup_layout *l)
{
	for (int c = 0; c < CGROUP_NCTL; c++) {
		free(l->parent[c]);
		l->parent[c] = NULL;
		l->version[c] = 0;
	}
}

struct json_object *
cgroup_layout_json(const struct cgroup_layout *l, const char *name)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(name));
	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0)
			continue;
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "version", json_object_new_int(l->version[c]));
		json_object_object_add(e, "parent", json_object_new_string(l->parent[c]));
		json_object_object_add(o, ctl_names[c], e);
	}
	return o;
}

/* 1 if name is one path component made of [A-Za-z0-9._-], not "." or "..". */
static int
name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	       n;
}

int
cgroup_layout_from_json(struct json_object *o, struct cgroup_layout *l, char **name,
			char *why, size_t why_len)
{
	struct json_object *v, *e;

	memset(l, 0, sizeof(*l));
	*name = NULL;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
	    !name_ok(json_object_get_string(v))) {
		err_set(why, why_len,
			"cgroup.name must be one path component of [A-Za-z0-9._-]");
		return -1;
	}
	for (int c = 0; c < CGROUP_NCTL; c++) {
		struct json_object *ver, *par;
		if (!json_object_object_get_ex(o, ctl_names[c], &e))
			continue;
		if (!json_object_object_get_ex(e, "version", &ver) ||
		    !json_object_object_get_ex(e, "parent", &par) ||
		    !json_object_is_type(par, json_type_string) ||
		    json_object_get_string(par)[0] != '/' ||
		    (json_object_get_int(ver) != 1 && json_object_get_int(ver) != 2)) {
			cgroup_layout_free(l);
			err_set(why, why_len,
				"cgroup.<controller> must be {version: 1|2, parent: absolute path}");
			return -1;
		}
		l->version[c] = json_object_get_int(ver);
		l->parent[c] = xstrdup(json_object_get_string(par));
	}
	*name = xstrdup(json_object_get_string(v));
	return 0;
}

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
		if (write_file(g->dir[c], file, v) == -1)
			goto fail;
		/* Without swap limits, a kernel over its memory limit swaps instead. */
		if (write_file(g->dir[c], v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes",
			       v2 ? "0" : v) == -1 && errno != ENOENT)
			goto fail;
		return 0;
	}
	if (c == CGROUP_PIDS) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->pids);
		file = "pids.max";
		if (write_file(g->dir[c], file, v) == -1)
			goto fail;
		return 0;
	}
	long quota = (long)(lim->cpu * CPU_PERIOD_US);
	if (quota < 1000)
		quota = 1000; /* the kernel's minimum */
	if (v2) {
		snprintf(v, sizeof(v), "%ld %d", quota, CPU_PERIOD_US);
		file = "cpu.max";
		if (write_file(g->dir[c], file, v) == -1)
			goto fail;
		return 0;
	}
	snprintf(v, sizeof(v), "%d", CPU_PERIOD_US);
	file = "cpu.cfs_period_us";
	if (write_file(g->dir[c], file, v) == -1)
		goto fail;
	snprintf(v, sizeof(v), "%ld", quota);
	file = "cpu.cfs_quota_us";
	if (write_file(g->dir[c], file, v) == -1)
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
cgroup_give(const struct cgroup_layout *l, uid_t uid, gid_t gid, char *why, size_t why_len)
{
	/*
	 * v2 moves a process only for a writer of the cgroup.procs of the common
	 * ancestor of both groups: D, the parent of D/kernels and D/daemon.
	 */
	static const char *const v2_files[] = {"", "/cgroup.procs", "/cgroup.threads",
					       "/cgroup.subtree_control", "/../cgroup.procs"};

	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0)
			continue;
		size_t n = l->version[c] == 2 ? 5 : 1;
		for (size_t i = 0; i < n; i++) {
			char *p = xasprintf("%s%s", l->parent[c], v2_files[i]);
			int rc = lchown(p, uid, gid);
			if (rc == -1)
				err_set(why, why_len, "chown %s: %s", p, strerror(errno));
			free(p);
			if (rc == -1)
				return -1;
		}
	}
	return 0;
}

int
cgroup_seal(const struct cgroup_layout *l, char *why, size_t why_len)
{
	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0)
			continue;
		/* A parent of this pid left by an earlier boot may have another owner. */
		if (lchown(l->parent[c], geteuid(), getegid()) == -1 ||
		    chmod(l->parent[c], 0700) == -1) {
			err_set(why, why_len, "keep %s root's (chown, chmod 0700): %s", l->parent[c],
				strerror(errno));
			return -1;
		}
	}
	return 0;
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

	if (!name_ok(name)) {
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
				c == CGROUP_MEMORY ? "memory_mb" : ctl_names[c], ctl_names[c]);
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

/* SIGKILL every process listed in dir/cgroup.procs; how many there were. */
static int
kill_listed(const char *dir)
{
	char procs[65536];
	int n = 0;

	if (read_file(dir, "cgroup.procs", procs, sizeof(procs)) == -1)
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
		if (write_file(dir, "freezer.state", state) == -1 ||
		    read_file(dir, "freezer.state", now, sizeof(now)) == -1 ||
		    strncmp(now, state, strlen(state)) == 0)
			return;
		nanosleep(&ts, NULL);
	}
}

/* CLOCK_MONOTONIC in milliseconds. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	write_file(dir, "freezer.state", "THAWED");
	return 0;
}

/* Remove an emptied group, retrying while its killed processes leave, until *arg (ms). */
static int
rmdir_cb(const char *dir, void *arg)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	const long long *deadline = arg;

	while (rmdir(dir) == -1 && errno == EBUSY && now_ms() < *deadline)
		nanosleep(&ts, NULL);
	return 0;
}

/*
 * SIGKILL everything in the group dir and in every group below it, and
 * wait (briefly) until they are empty.
 */
static void
kill_tree(const char *dir, int version, int freezer)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	/* v2 (Linux 5.14+) kills the whole subtree at once, forks included. */
	if (version == 2 && write_file(dir, "cgroup.kill", "1") == 0)
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

/* kill_tree, then remove dir's subtree, deepest first, and dir. */
static void
remove_dir(const char *dir, int version, int freezer)
{
	long long deadline;

	kill_tree(dir, version, freezer);
	deadline = now_ms() + EMPTY_WAIT_MS;
	walk_tree(dir, rmdir_cb, &deadline);
}

void
cgroup_kill_all(struct cgroup *g)
{
	/* The freezer's group first: it ends everything at once. */
	if (g->dir[CGROUP_FREEZER])
		kill_tree(g->dir[CGROUP_FREEZER], g->version[CGROUP_FREEZER], 1);
	for (int c = 0; c < CGROUP_NLIMIT; c++)
		if (g->dir[c] && !same_dir_before(g, c))
			kill_tree(g->dir[c], g->version[c], 0);
}

unsigned long
cgroup_oom_kills(const struct cgroup *g)
{
	char text[4096];
	const char *dir = g->dir[CGROUP_MEMORY];

	if (dir == NULL ||
	    read_file(dir, g->version[CGROUP_MEMORY] == 2 ? "memory.events" : "memory.oom_control",
		      text, sizeof(text)) == -1)
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
			remove_dir(g->dir[c], g->version[c], c == CGROUP_FREEZER);
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

	if (!name_ok(name))
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

void
cgroup_layout_remove(const struct cgroup_layout *l)
{
	for (int c = 0; c < CGROUP_NCTL; c++) {
		int seen = 0;
		for (int i = 0; i < c; i++)
			seen |= l->version[i] && l->version[c] &&
				strcmp(l->parent[i], l->parent[c]) == 0;
		if (l->version[c] && !seen)
			remove_children_and_dir(l->parent[c], l->version[c], c == CGROUP_FREEZER, 0);
	}
}
