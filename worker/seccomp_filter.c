/* seccomp_filter.c - see seccomp_filter.h. The rules are the table below. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "scfilter.h"
#include "seccomp_filter.h"

#define DENY SCMP_ACT_ERRNO(EPERM)
#define NO_ARG {0, 0, 0, 0}
#define ARG0_NE(v) {0, SCMP_CMP_NE, (v), 0}
#define ARG0_HAS(f) {0, SCMP_CMP_MASKED_EQ, (f), (f)}
#define ARG_NE(i, v) {(i), SCMP_CMP_NE, (v), 0}
#define ARG_HAS(i, f) {(i), SCMP_CMP_MASKED_EQ, (f), (f)}
/* Before exec, the gate's until READY (sandbox_seccomp_gate.c); lock() denies it outright. */
#define GATED 1

/*
 * A deny list on top of "allow": the filter is a network and cross-process
 * boundary, not a full sandbox (the kernel must still run arbitrary code).
 * Every other architecture (i386 via int 0x80, x32 numbers) is killed by
 * the filter's bad-architecture action, socketcall(2) included.
 */
static const struct {
	int nr;
	uint32_t action;
	struct scmp_arg_cmp arg; /* op 0: unconditional */
	int gated;		 /* before exec: the gate's until READY (below) */
	const char *why;
} rules[] = {
	/* The IP network boundary. */
	{SCMP_SYS(socket), DENY, ARG0_NE(AF_UNIX), GATED,
	 "no new socket but AF_UNIX: no IP, no netlink, no packet sockets"},
	{SCMP_SYS(socketpair), DENY, ARG0_NE(AF_UNIX), 0, "socket pairs only of AF_UNIX"},
	{SCMP_SYS(connect), DENY, NO_ARG, 0,
	 "no new connection, not even to a Unix socket of the host or a sibling"},
	{SCMP_SYS(bind), DENY, NO_ARG, GATED,
	 "no new address to be reached at (abstract Unix names included)"},
	{SCMP_SYS(listen), DENY, NO_ARG, GATED, "no new listener"},
	/* Datagrams to an address: connect() is not needed to reach a socket. */
	{SCMP_SYS(sendto), DENY, ARG_NE(4, 0), 0,
	 "no datagram to an address (host abstract or filesystem Unix sockets); send() on "
	 "a connected socket or a socketpair passes a NULL address and stays allowed"},
	{SCMP_SYS(sendmsg), DENY, NO_ARG, 0,
	 "its address (msg_name) is in memory, which seccomp cannot read: refused whole, "
	 "so descriptor passing (SCM_RIGHTS) goes too"},
	{SCMP_SYS(sendmmsg), DENY, NO_ARG, 0, "several sendmsg at once, as above"},
	/* Ways around the rules above. */
	{SCMP_SYS(io_uring_setup), DENY, NO_ARG, 0,
	 "io_uring runs socket operations that seccomp never sees"},
	{SCMP_SYS(io_uring_enter), DENY, NO_ARG, 0, "io_uring, as above"},
	{SCMP_SYS(io_uring_register), DENY, NO_ARG, 0, "io_uring, as above"},
	{SCMP_SYS(pidfd_getfd), DENY, NO_ARG, 0,
	 "would copy a descriptor (a socket) out of another process"},
	{SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS), NO_ARG, 0,
	 "its flags live in memory seccomp cannot read; ENOSYS makes libc fall back to clone"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWUSER), 0,
	 "no new user namespace (namespace capabilities)"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWNET), 0, "no new network namespace"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWNS), 0, "no new mount namespace"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWPID), 0, "no new pid namespace"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWIPC), 0, "no new IPC namespace"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWUTS), 0, "no new UTS namespace"},
	{SCMP_SYS(clone), DENY, ARG0_HAS(CLONE_NEWCGROUP), 0, "no new cgroup namespace"},
	{SCMP_SYS(unshare), DENY, NO_ARG, 0, "no new namespace of any kind"},
	{SCMP_SYS(setns), DENY, NO_ARG, 0, "no entering another namespace (a sibling's network)"},
	/* Other processes. */
	{SCMP_SYS(ptrace), DENY, NO_ARG, 0, "no tracing of siblings or of the worker"},
	{SCMP_SYS(process_vm_readv), DENY, NO_ARG, 0, "no reading another process's memory"},
	{SCMP_SYS(process_vm_writev), DENY, NO_ARG, 0, "no writing another process's memory"},
	{SCMP_SYS(kcmp), DENY, NO_ARG, 0, "no probing other processes' descriptors and memory"},
	/* Kernel attack surface a kernel never needs. */
	{SCMP_SYS(userfaultfd), DENY, NO_ARG, 0, "a favourite of kernel exploits for winning races"},
	{SCMP_SYS(bpf), DENY, NO_ARG, 0, "BPF programs and maps"},
	{SCMP_SYS(perf_event_open), DENY, NO_ARG, 0,
	 "performance counters watch other processes and the kernel"},
	{SCMP_SYS(keyctl), DENY, NO_ARG, 0, "the kernel keyrings are shared by the uid"},
	{SCMP_SYS(add_key), DENY, NO_ARG, 0, "kernel keyrings, as above"},
	{SCMP_SYS(request_key), DENY, NO_ARG, 0, "kernel keyrings, as above"},
	/* The gate's own ground. */
	{SCMP_SYS(seccomp), DENY, ARG_HAS(1, SECCOMP_FILTER_FLAG_NEW_LISTENER), 0,
	 "no listener of the kernel's own: with one it could let its own bind and listen "
	 "through the gate, whose listener is gone once the kernel is ready"},
};

/* Which filter build() makes: the table, or one of its two halves before exec. */
enum part {
	PART_ALL,  /* every rule as its action says: lock() */
	PART_DENY, /* before exec: every rule but the gated ones */
	PART_GATE, /* before exec: the gated ones, asked of the worker (sandbox_seccomp_gate.c) */
};

/* The filter of `part`, ready to load or export; NULL with why set. */
static scmp_filter_ctx
build(enum part part, char *why, size_t why_len)
{
	scmp_filter_ctx ctx = scfilter_new(SCMP_ACT_ALLOW, why, why_len);

	if (ctx == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		/* op 0: unconditional, no comparison. */
		unsigned n = rules[i].arg.op != 0;
		uint32_t action = part == PART_GATE ? SCMP_ACT_NOTIFY : rules[i].action;
		if (part != PART_ALL && (part == PART_DENY) == rules[i].gated)
			continue;
		if (scfilter_add(ctx, action, rules[i].nr, n, &rules[i].arg, why, why_len) == -1) {
			seccomp_release(ctx);
			return NULL;
		}
	}
	return ctx;
}

/* 0 if no open descriptor is a socket of another family than AF_UNIX. */
static int
only_unix_sockets(char *why, size_t why_len)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int bad = 0;

	if (d == NULL) {
		snprintf(why, why_len, "cannot list /proc/self/fd: %s", strerror(errno));
		return -1;
	}
	while (!bad && (e = readdir(d)) != NULL) {
		struct stat st;
		int fd = atoi(e->d_name), dom;
		socklen_t len = sizeof(dom);
		if (e->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &st) == -1 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == -1) {
			snprintf(why, why_len, "descriptor %d: SO_DOMAIN: %s", fd,
				 strerror(errno));
			bad = 1;
		} else if (dom != AF_UNIX) {
			snprintf(why, why_len,
				 "descriptor %d is a socket of family %d, not AF_UNIX", fd, dom);
			bad = 1;
		}
	}
	closedir(d);
	return bad ? -1 : 0;
}

int
codeexec_seccomp_lock(char *why, size_t why_len)
{
	/* No same-uid ptrace or /proc/PID/mem of us, whatever Yama says. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		snprintf(why, why_len, "prctl PR_SET_DUMPABLE: %s", strerror(errno));
		return -1;
	}
	scmp_filter_ctx ctx = build(PART_ALL, why, why_len);
	if (ctx == NULL || scfilter_load(ctx, why, why_len) == -1)
		return -1;
	return only_unix_sockets(why, why_len);
}

int
seccomp_filter_export(int gate, struct sock_fprog *prog, char *why, size_t why_len)
{
	scmp_filter_ctx ctx = build(gate ? PART_GATE : PART_DENY, why, why_len);
	struct stat st;
	int fd, rc;

	if (ctx == NULL)
		return -1;
	if ((fd = memfd_create("seccomp-bpf", MFD_CLOEXEC)) == -1) {
		snprintf(why, why_len, "seccomp: memfd_create: %s", strerror(errno));
		seccomp_release(ctx);
		return -1;
	}
	rc = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc != 0 || fstat(fd, &st) == -1 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(struct sock_filter) != 0) {
		snprintf(why, why_len, "seccomp: cannot export the filter: %s",
			 strerror(rc != 0 ? -rc : errno));
		close(fd);
		return -1;
	}
	prog->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	prog->filter = malloc((size_t)st.st_size);
	if (prog->filter == NULL || pread(fd, prog->filter, (size_t)st.st_size, 0) != st.st_size) {
		snprintf(why, why_len, "seccomp: cannot read the exported filter back");
		free(prog->filter);
		prog->filter = NULL;
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}
