/*
 * cgroup.h - one control group per kernel, for its memory, pids and cpu
 * limits. Built of cgroup_layout.c (the layout: probe, give, seal, START's
 * form of it), cgroup.c (one kernel's group) and cgroup_tree.c (ending and
 * removing groups with their subtrees), over cgroup_fs.c (control files);
 * cgroup_fs.h and cgroup_tree.h are theirs alone.
 *
 * Layout. The supervisor calls cgroup_probe() once at start-up; it finds
 * where kernels' groups can live and prepares that place:
 *
 *   cgroup v2 (a delegated subtree of the daemon's own group D, as
 *   systemd's Delegate=yes gives): the daemon's processes move to the leaf
 *   D/daemon (v2 allows no processes in a group that distributes
 *   controllers), "+memory +pids +cpu" are enabled in D and in D/kernels,
 *   and each kernel gets D/kernels/<name>.
 *
 *   cgroup v1 (v1 or hybrid hosts, where the controllers are mounted one
 *   hierarchy each): for every controller C, the daemon's own group G_C in
 *   that hierarchy gets G_C/codeexecd/<instance> (one per running daemon,
 *   named by its pid, so two daemons never share or re-own a parent), and
 *   each kernel gets G_C/codeexecd/<instance>/<name> there.
 *
 * v2 is used when it can enforce every controller it has; a controller it
 * lacks is taken from v1 when mounted. "freezer" is not a limit: it is the
 * group every kernel lives in, limits or not, so that everything a session
 * started (detached children included) is killed whole when it ends (v2:
 * cgroup.kill; v1: the freezer hierarchy, frozen, killed, thawed). The
 * supervisor and the workers stay in their own groups, outside every
 * kernel's, so they keep answering while a kernel burns CPU or memory. The
 * layout travels to the worker inside START (cgroup_layout_json); the
 * worker creates, fills, kills and removes its kernel's group; the
 * supervisor removes the group of a worker that died without doing so,
 * and the whole instance at stop.
 *
 * Ownership: a kernel group belongs to the owner of its parent. With
 * kernel_uid_range the supervisor gives the parents to its user
 * (cgroup_give) and kernels of other uids can write nothing there. When
 * kernels share the daemon's user, a daemon started as root keeps the
 * parents root's and 0700 (cgroup_seal), and the worker, which makes the
 * groups under that user with CAP_DAC_OVERRIDE, gives each to root with
 * CAP_CHOWN (privdrop.c keeps both for it): no kernel can reach the tree,
 * make a group or move a process anywhere in it. The kernel enters its
 * group through cgroup.procs descriptors the worker opened before the fork.
 * A daemon that never was root owns whatever layout it can make (a
 * delegated subtree), and so do its kernels: they can make groups and move
 * processes there (doc/README.privsep). Limits are refused whenever kernels
 * share the daemon's uid. Killing and removing a group always covers its
 * whole subtree (v1: freeze the top, kill every group's processes, thaw
 * each; removal deepest first), for the groups such a kernel makes.
 */
#ifndef COMMON_CGROUP_H
#define COMMON_CGROUP_H

#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "err.h"

enum cgroup_ctl { CGROUP_MEMORY, CGROUP_PIDS, CGROUP_CPU, CGROUP_FREEZER, CGROUP_NCTL };
/* The controllers that carry limits: the first CGROUP_NLIMIT of the enum. */
#define CGROUP_NLIMIT CGROUP_FREEZER

/* What a kernel may use; 0 means no limit. */
struct cgroup_limits {
	uint64_t memory_mb;
	uint64_t pids;	/* tasks: processes and threads */
	double cpu;	/* share of one core, e.g. 0.5 */
};

/* Where kernels' groups go, per controller. Owns its strings. */
struct cgroup_layout {
	int version[CGROUP_NCTL];   /* 2, 1, or 0 when the controller is unusable */
	char *parent[CGROUP_NCTL];  /* directory holding the kernels' groups */
	char reason[CGROUP_NCTL][200]; /* why a controller is unusable */
};

/* One kernel's group. Opaque. */
struct cgroup;

/* "memory", "pids", "cpu" or "freezer". */
const char *cgroup_ctl_name(enum cgroup_ctl c);

/*
 * Find and prepare the place for kernels' groups (see above), the v1
 * parents named `instance` (one path component: the daemon's pid); may move
 * the calling process to D/daemon on cgroup v2. v1 parents of daemons that
 * are gone (no process of that pid) are killed and removed on the way.
 * Fills *l (caller frees with cgroup_layout_free) and returns how many
 * controllers are usable; each unusable one has its reason.
 */
int cgroup_probe(struct cgroup_layout *l, const char *instance);
void cgroup_layout_free(struct cgroup_layout *l);
/*
 * At stop: kill what is left in every kernel group of the layout, remove
 * the groups and the instance's own v1 parents (which needs write access to
 * codeexecd/, root's: a daemon that dropped to its user without
 * CAP_DAC_OVERRIDE leaves the empty parents to the next start).
 */
void cgroup_layout_remove(const struct cgroup_layout *l);

/*
 * Give the kernels' parent directories to uid/gid (the daemon's user), for
 * a supervisor that probes as root and then drops to its user: workers of
 * that user can then make, fill and remove kernel groups there. On v2 the
 * directory's cgroup.procs, cgroup.threads and cgroup.subtree_control go
 * too, as systemd's Delegate=yes does, and the daemon's group's
 * cgroup.procs (moving into a kernel group writes there). 0, or -1 with
 * why[why_len] set.
 */
int cgroup_give(const struct cgroup_layout *l, uid_t uid, gid_t gid, char *why, size_t why_len);

/*
 * For a supervisor started as root whose kernels will share its user: keep
 * the kernels' parent directories the caller's (root's) and make them 0700,
 * so that no kernel can enter the tree; workers then need CAP_DAC_OVERRIDE
 * and CAP_CHOWN there (cgroup_create gives each group to the parent's
 * owner). 0, or -1 with why[why_len] naming the directory and the errno.
 */
int cgroup_seal(const struct cgroup_layout *l, char *why, size_t why_len);

/*
 * For the supervisor at start-up: 0 if every limit set in lim can be
 * enforced with layout l, else -1 with why[why_len] naming each limit that
 * cannot and the reason (to log, or to refuse with limits.required).
 */
int cgroup_check_limits(const struct cgroup_layout *l, const struct cgroup_limits *lim, char *why,
			size_t why_len);

/*
 * START's "cgroup" member for a kernel group called `name`:
 * {"name": name, "memory": {"version": 1|2, "parent": dir}, "pids": ...,
 * "cpu": ...}, each controller only when usable. Caller owns it.
 */
struct json_object *cgroup_layout_json(const struct cgroup_layout *l, const char *name);
/*
 * Parse that object into *l and *name (caller frees both). 0, or -1 with
 * why[why_len] saying what is wrong.
 */
int cgroup_layout_from_json(struct json_object *o, struct cgroup_layout *l, char **name,
			    char *why, size_t why_len);

/*
 * Create the group `name` under the layout, owned like its parent (see
 * Ownership above), and set the limits; without
 * limits, the group is made in the freezer hierarchy (or any usable one)
 * only to hold and end the kernel's processes. A limit whose controller is
 * unusable fails: limits are never silently dropped.
 * Returns the group (caller owns: cgroup_destroy), or NULL with
 * why[why_len] set.
 */
struct cgroup *cgroup_create(const struct cgroup_layout *l, const char *name,
			     const struct cgroup_limits *lim, char *why,
			     size_t why_len);
/*
 * Open the cgroup.procs files a process writes "0" to in order to enter the
 * group (one per hierarchy; at most CGROUP_NCTL), close-on-exec. Returns how
 * many, or -1 with why[why_len] set. The caller closes them.
 */
int cgroup_procs_fds(const struct cgroup *g, int *fds, char *why, size_t why_len);
/*
 * SIGKILL every process in the group and in every group below it, forks
 * racing the kill included (v2 cgroup.kill, v1 freezer), and wait
 * (briefly) until they are empty.
 */
void cgroup_kill_all(struct cgroup *g);
/* How many times the memory limit made the kernel's OOM killer act. */
unsigned long cgroup_oom_kills(const struct cgroup *g);
/* Kill what is left, remove the group and those below it, free it; *gp becomes NULL. */
void cgroup_destroy(struct cgroup **gp);
/*
 * Remove the kernel group `name` under the layout, if it exists, killing
 * what still runs in it: for groups a dead supervisor's workers left, and
 * the group of a worker that died without removing it.
 * Returns 1 if there was such a group, else 0.
 */
int cgroup_remove_named(const struct cgroup_layout *l, const char *name);

#endif
