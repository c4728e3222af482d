/*
 * cgroup_fs.h - the cgroupfs primitives the cgroup_*.c files share, and
 * nothing for users of cgroup.h: reading and writing one control file, and
 * the rule for a group's name. Nothing here allocates for the caller.
 */
#ifndef COMMON_CGROUP_FS_H
#define COMMON_CGROUP_FS_H

#include <stddef.h>

/* Write the string s to dir/file; 0, or -1 with errno. */
int cgroup_fs_write(const char *dir, const char *file, const char *s);
/* Read dir/file (small) into out[size], NUL-terminated; 0, or -1 with errno. */
int cgroup_fs_read(const char *dir, const char *file, char *out, size_t size);
/* 1 if name is one path component of at most 64 bytes of [A-Za-z0-9._-], not "." or "..". */
int cgroup_fs_name_ok(const char *name);

#endif
