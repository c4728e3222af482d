/*
 * fork_dir.h - the parent's act for FORK_DIR (priv_msg.h): a fresh session
 * directory, a kernel identity of its own (kernel_uid_range), and the copy
 * of the source session's directory into it (fs_copy.h), at most
 * fork_max_bytes and FORK_ENTRIES_MAX entries. The front, unprivileged,
 * cannot read a kernel's directory; the parent reads it with its own
 * rights and never follows what the kernel planted there.
 */
#ifndef SUPERVISOR_FORK_DIR_H
#define SUPERVISOR_FORK_DIR_H

#include <stddef.h>
#include <sys/types.h>

#include "fs_copy.h"
#include "monitor.h"
#include "priv_msg.h"

struct config;

/* Entries (files, directories, what is skipped) a fork's copy may meet:
 * even in a child of the parent, a tree of millions of empty files
 * would hold for minutes although it is far below fork_max_bytes. */
#define FORK_ENTRIES_MAX 100000

/* Remember the configuration (borrowed: fork_max_bytes, state_dir, the range). */
void fork_dir_init(const struct config *cfg);
/* monitor_ops.fork_dir and fork_done (monitor.h): the copy runs in a
 * child of the parent, which answers once it is reaped. */
int fork_dir_start(void *ctx, const char *src, struct monitor_fork *job, char *why,
		   size_t why_len);
int fork_dir_done(void *ctx, struct monitor_fork *job, int status, struct fs_copy_stats *st,
		  char *why, size_t why_len);

#endif
