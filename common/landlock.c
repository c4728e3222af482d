/* landlock.c - see landlock.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "err.h"
#include "landlock.h"
#include "landlock_uapi.h"

const char *const landlock_use_names[] = {"auto", "required", "off", NULL};

int
landlock_create(const void *attr, size_t size, uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

int
landlock_add_path(int ruleset, int dir_fd, uint64_t access)
{
	struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = dir_fd};

	return (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
}

int
landlock_restrict(int ruleset)
{
	return (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
}

int
landlock_abi(void)
{
	int abi = landlock_create(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : abi;
}

int
landlock_resolve(enum landlock_use use, char *why, size_t why_len)
{
	if (use == LANDLOCK_OFF)
		return 0;
	int abi = landlock_abi();
	if (use == LANDLOCK_REQUIRED && abi < LANDLOCK_ABI_SCOPED) {
		if (abi == 0)
			return err_set(why, why_len, "kernel_landlock is required, but this "
				       "kernel offers no Landlock: %s", strerror(errno));
		return err_set(why, why_len, "kernel_landlock is required, but this kernel "
			       "offers Landlock ABI %d, and the scoping of signals and abstract "
			       "sockets needs ABI %d", abi, LANDLOCK_ABI_SCOPED);
	}
	return abi;
}

uint64_t
landlock_fs_rights(int abi)
{
	/* ABI 1's thirteen rights, then one more at ABI 2, 3 and 5. */
	uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

const char *
landlock_state_text(enum landlock_use use, int abi, char *buf, size_t len)
{
	if (use == LANDLOCK_OFF)
		snprintf(buf, len, "kernel_landlock: off: kernels are not confined by Landlock");
	else if (abi == 0)
		snprintf(buf, len, "kernel_landlock: off: this kernel offers no Landlock");
	else if (abi < LANDLOCK_ABI_SCOPED)
		snprintf(buf, len, "kernel_landlock: on, ABI %d: files only (signals and "
			 "abstract sockets need ABI %d)", abi, LANDLOCK_ABI_SCOPED);
	else
		snprintf(buf, len, "kernel_landlock: on, ABI %d: files, signals, abstract sockets",
			 abi);
	return buf;
}
