/*
 * fs_tree.h - removing directory trees that someone else may have filled.
 *
 * The one way to remove a tree in the project, in supervisor and worker
 * alike: every step opens relative to its parent with O_NOFOLLOW, so a
 * link planted in the tree (by a kernel that owned it, say) is removed,
 * never followed.
 */
#ifndef COMMON_FS_TREE_H
#define COMMON_FS_TREE_H

/*
 * Remove `name` under the directory `parent` (a descriptor, or AT_FDCWD),
 * and everything below it if it is a directory. A directory its owner made
 * unreadable (mode 0) is opened up first. A name already gone is not an
 * error. 0, or -1 with errno of the first failure (the rest is still tried).
 */
int fs_remove_tree_at(int parent, const char *name);
/* fs_remove_tree_at(AT_FDCWD, path): rm -rf that never follows a link. */
int fs_remove_tree(const char *path);
/*
 * Remove everything in the directory `dir`, which is kept (it must not be a
 * link). 0, or -1 with errno of the first failure.
 */
int fs_empty_dir(const char *dir);

#endif
