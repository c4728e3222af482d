/*
 * cgroup_layout.c - the layout of cgroup.h: find and prepare the place for
 * kernels' groups (cgroup_probe), give it to the daemon's user or keep it
 * root's (cgroup_give, cgroup_seal), describe it to a worker in START, and
 * remove it at stop (cgroup_layout_remove).
 */
#include "autoconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_fs.h"
#include "cgroup_tree.h"
#include "xmalloc.h"

static const char *const ctl_names[CGROUP_NCTL] = {"memory", "pids", "cpu", "freezer"};

const char *
cgroup_ctl_name(enum cgroup_ctl c)
{
	return ctl_names[c];
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
	if (cgroup_fs_read(dir, "cgroup.procs", procs, sizeof(procs)) == -1)
		goto out;
	rc = 0;
	for (char *t = strtok(procs, "\n"); t && rc == 0; t = strtok(NULL, "\n"))
		if (cgroup_fs_write(leaf, "cgroup.procs", t) == -1 && errno != ESRCH)
			rc = -1;
out:
	free(leaf);
	return rc;
}

/* Enable the controllers named in `want` below dir; 0 or -1 with errno. */
static int
v2_enable(const char *dir, const char *want)
{
	return cgroup_fs_write(dir, "cgroup.subtree_control", want);
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
	if (cgroup_fs_read(dir, "cgroup.controllers", ctls, sizeof(ctls)) == -1) {
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
		cgroup_tree_remove_below(sub, 1, freezer, 1);
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

int
cgroup_layout_from_json(struct json_object *o, struct cgroup_layout *l, char **name,
			char *why, size_t why_len)
{
	struct json_object *v, *e;

	memset(l, 0, sizeof(*l));
	*name = NULL;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
	    !cgroup_fs_name_ok(json_object_get_string(v))) {
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

void
cgroup_layout_remove(const struct cgroup_layout *l)
{
	for (int c = 0; c < CGROUP_NCTL; c++) {
		int seen = 0;
		for (int i = 0; i < c; i++)
			seen |= l->version[i] && l->version[c] &&
				strcmp(l->parent[i], l->parent[c]) == 0;
		if (l->version[c] && !seen)
			cgroup_tree_remove_below(l->parent[c], l->version[c], c == CGROUP_FREEZER,
						 0);
	}
}
