/* netmode.c - see netmode.h. */
#include "autoconf.h"

#include <stddef.h>

#include "netmode.h"

const char *const net_mode_names[] = {
	[NET_INHERIT] = "inherit",
	[NET_ISOLATED] = "isolated",
	[NET_SECCOMP] = "seccomp",
	NULL,
};
