/*
 * landlock.h - Landlock's three system calls, and what of it this host's
 * kernel offers (kernel_landlock).
 *
 * Common to the parent, which reports and checks the ABI at start-up, and
 * the worker, which confines each kernel with it (worker/sandbox_landlock.c).
 * No library: glibc has no wrappers, and the calls are three.
 */
#ifndef COMMON_LANDLOCK_H
#define COMMON_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "landlock_uapi.h"

/* kernel_landlock: the order is the config's choices'. */
enum landlock_use {
	LANDLOCK_AUTO,
	LANDLOCK_REQUIRED,
	LANDLOCK_OFF,
};
extern const char *const landlock_use_names[];

/* The ABI whose scoping of abstract sockets and signals `required` asks for. */
#define LANDLOCK_ABI_SCOPED 6

/* The highest Landlock ABI the running kernel offers; 0 with errno when none. */
int landlock_abi(void);
/*
 * The ABI kernels are to be confined at for `use` on this host (0: not
 * confined), or -1 with why[why_len] when `required` cannot be met.
 */
int landlock_resolve(enum landlock_use use, char *why, size_t why_len);
/* What `use` comes to at landlock_resolve()'s `abi`, in buf[len], for the log and -n. */
const char *landlock_state_text(enum landlock_use use, int abi, char *buf, size_t len);

/* The file access rights ABI `abi` handles, all of them. */
uint64_t landlock_fs_rights(int abi);
/* What a kernel may do where it may only read: read, list, execute. */
#define LANDLOCK_FS_READ_ONLY \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* The system calls, as the kernel documents them; -1 with errno. */
int landlock_create(const void *attr, size_t size, uint32_t flags);
int landlock_add_path(int ruleset, int dir_fd, uint64_t access);
int landlock_restrict(int ruleset);

#endif
