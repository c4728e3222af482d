/*
 * netmode.h - the kernel's network mode, one enum for the config
 * (kernel_network_mode), the START message (network_mode) and the
 * worker's sandbox, so the three cannot drift apart.
 */
#ifndef COMMON_NETMODE_H
#define COMMON_NETMODE_H

enum net_mode {
	NET_INHERIT,  /* the host's network, as the worker has it */
	NET_ISOLATED, /* user + network namespaces with loopback only */
	NET_SECCOMP,  /* a seccomp filter the kernel installs once ready */
};

/*
 * The port an isolated kernel reaches the egress proxy on, 127.0.0.1 in its
 * own network namespace (Squid's, which proxy-aware tools expect).
 */
#define NET_EGRESS_PORT 3128

/* The names, in the enum's order, NULL-terminated (config and IPC choices). */
extern const char *const net_mode_names[];

#endif
