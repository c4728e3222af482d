/*
 * landlock_uapi.h - the Landlock UAPI this tree uses, whatever the
 * installed <linux/landlock.h> knows.
 *
 * Debian 12's header stops at ABI 2: it lacks the truncate and device
 * ioctl rights (ABI 3 and 5) and the scoping of abstract Unix sockets and
 * signals (ABI 6), with the ruleset's `scoped` field. The values are the
 * kernel's ABI and never change; a newer header's definitions win. The
 * ruleset attribute is our own struct, laid out as the kernel's ABI 6
 * one, because an older header's struct has no room for the new fields
 * (the kernel reads only as much of it as the size passed says).
 */
#ifndef COMMON_LANDLOCK_UAPI_H
#define COMMON_LANDLOCK_UAPI_H

#include <linux/landlock.h>
#include <stdint.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr of ABI 6 and later. */
struct landlock_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#endif
