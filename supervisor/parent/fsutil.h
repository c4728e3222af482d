/*
 * fsutil.h - directory helpers of the supervisor.
 */
#ifndef SUPERVISOR_FSUTIL_H
#define SUPERVISOR_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "fs_tree.h" /* fs_remove_tree(), shared with the worker */

/* mkdir -p: create `dir` and missing parents (parents 0755, `dir` with
 * `mode`). Returns 0, or -1 with the path and errno text in err. */
int fs_mkdir_p(const char *dir, mode_t mode, char *why, size_t why_len);
/* fsync the directory `dir`, so renames in it are durable. -1 with errno. */
int fs_sync_dir(const char *dir);
/* The last component of `path` (no trailing slash expected). Borrowed. */
const char *fs_basename(const char *path);
/* The directory part of `path` ("/" for "/x"). Caller owns. */
char *fs_dirname(const char *path);
/* Whether `dir`/`name` exists (following symlinks). */
int fs_exists(const char *dir, const char *name);

#endif
