/*
 * cgroup_tree.h - ending and removing a control group together with every
 * group below it, for the cgroup_*.c files only (users of cgroup.h call
 * cgroup_destroy or cgroup_remove_named). A kernel that owns its group can
 * make groups inside it and move processes there, so these always cover the
 * whole subtree. `version` is the hierarchy's (1 or 2); `freezer` says a v1
 * group is in the freezer hierarchy, which can stop forks during the kill.
 * The caller owns every path it passes.
 */
#ifndef COMMON_CGROUP_TREE_H
#define COMMON_CGROUP_TREE_H

/*
 * SIGKILL everything in the group dir and in every group below it, forks
 * racing the kill included (v2 cgroup.kill, v1 freezer), and wait (briefly)
 * until they are empty.
 */
void cgroup_tree_kill(const char *dir, int version, int freezer);
/* cgroup_tree_kill, then remove dir's subtree, deepest first, and dir. */
void cgroup_tree_remove(const char *dir, int version, int freezer);
/* cgroup_tree_remove every group below dir, then rmdir dir; `stale`: log each one. */
void cgroup_tree_remove_below(const char *dir, int version, int freezer, int stale);

#endif
