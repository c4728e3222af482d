/*
 * egress_proxy_filter.c - the egress proxy's own seccomp allow-list
 * (egress_proxy_int.h), loaded once its rules and hosts file are read.
 * A call no line allows kills the proxy, which the parent starts again.
 * Measured with strace through tests/system/495-egress-proxy.sh, plus what
 * glibc's resolver needs for DNS and NSS (files, dns; nscd's socket), and
 * tests/system/498-egress-inject.sh for the intercepting threads.
 */
#include "autoconf.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <seccomp.h>

#include "egress_proxy_int.h"
#include "scfilter.h"

#define ALLOW SCMP_ACT_ALLOW
#define EQ(i, v) {(i), SCMP_CMP_EQ, (v), 0}

static const struct {
	int nr;
	uint32_t action;
	unsigned nargs;
	struct scmp_arg_cmp arg[1];
	const char *why;
} rules[] = {
	/* Memory and exit. */
	{SCMP_SYS(brk), ALLOW, 0, {}, "malloc"},
	{SCMP_SYS(mmap), ALLOW, 0, {}, "malloc, dlopen of NSS modules"},
	{SCMP_SYS(munmap), ALLOW, 0, {}, "free, dlclose"},
	{SCMP_SYS(mprotect), ALLOW, 0, {}, "dlopen of NSS modules"},
	{SCMP_SYS(mremap), ALLOW, 0, {}, "realloc of large blocks"},
	{SCMP_SYS(madvise), ALLOW, 0, {}, "free"},
	{SCMP_SYS(exit_group), ALLOW, 0, {}, "exit"},
	{SCMP_SYS(exit), ALLOW, 0, {}, "exit"},
	{SCMP_SYS(rt_sigreturn), ALLOW, 0, {}, "a signal handler returns"},
	{SCMP_SYS(rt_sigprocmask), ALLOW, 0, {}, "glibc, around fork-free calls"},
	{SCMP_SYS(rt_sigaction), ALLOW, 0, {}, "glibc's abort"},
	{SCMP_SYS(sigaltstack), ALLOW, 0, {}, "sanitizers (ASan sets up its alternate signal stack)"},
	{SCMP_SYS(sched_getaffinity), ALLOW, 0, {}, "sanitizers (ASan, as an intercepting thread starts)"},
	{SCMP_SYS(getpid), ALLOW, 0, {}, "log lines, the resolver's query ids"},
	{SCMP_SYS(gettid), ALLOW, 0, {}, "abort"},
	{SCMP_SYS(tgkill), ALLOW, 0, {}, "abort on a fatal error"},
	{SCMP_SYS(futex), ALLOW, 0, {}, "glibc's locks"},
	{SCMP_SYS(getrandom), ALLOW, 0, {}, "malloc's and the resolver's randomness"},
	{SCMP_SYS(clock_gettime), ALLOW, 0, {}, "durations, log times"},
	{SCMP_SYS(gettimeofday), ALLOW, 0, {}, "log times"},
	{SCMP_SYS(uname), ALLOW, 0, {}, "the resolver's domain"},

	/* Threads: one per intercepted connection (egress_proxy_tls.c), never a process. */
	{SCMP_SYS(clone), ALLOW, 1, {{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD}},
	 "pthread_create; a clone without CLONE_THREAD (a fork) is refused"},
	{SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS), 0, {},
	 "its flags are out of reach in memory: glibc falls back to clone"},
	{SCMP_SYS(set_robust_list), ALLOW, 0, {}, "a new thread"},
	{SCMP_SYS(rseq), ALLOW, 0, {}, "a new thread"},
	{SCMP_SYS(sched_yield), ALLOW, 0, {}, "glibc's and OpenSSL's locks"},

	/* Files: the resolver's configuration and NSS modules, the sessions' sockets. */
	{SCMP_SYS(openat), ALLOW, 0, {}, "resolv.conf, nsswitch.conf, hosts, NSS modules"},
	{SCMP_SYS(open), ALLOW, 0, {}, "the same (older glibc)"},
	{SCMP_SYS(read), ALLOW, 0, {}, "clients, upstreams, files, the control pipe"},
	{SCMP_SYS(pread64), ALLOW, 0, {}, "dlopen"},
	{SCMP_SYS(write), ALLOW, 0, {}, "the log"},
	{SCMP_SYS(writev), ALLOW, 0, {}, "syslog"},
	{SCMP_SYS(close), ALLOW, 0, {}, "everything it opens"},
	{SCMP_SYS(lseek), ALLOW, 0, {}, "stdio"},
	{SCMP_SYS(fstat), ALLOW, 0, {}, "stdio, dlopen"},
	{SCMP_SYS(newfstatat), ALLOW, 0, {}, "stat, lstat of a stale socket"},
	{SCMP_SYS(statx), ALLOW, 0, {}, "the same (newer glibc)"},
	{SCMP_SYS(stat), ALLOW, 0, {}, "the same (older glibc)"},
	{SCMP_SYS(lstat), ALLOW, 0, {}, "the same (older glibc)"},
	{SCMP_SYS(access), ALLOW, 0, {}, "dlopen"},
	{SCMP_SYS(fcntl), ALLOW, 0, {}, "O_NONBLOCK"},
	{SCMP_SYS(ioctl), ALLOW, 1, {EQ(1, FIONREAD)}, "the resolver sizes an answer"},
	{SCMP_SYS(unlink), ALLOW, 0, {}, "a closed session's socket, a stale one"},
	{SCMP_SYS(rename), ALLOW, 0, {}, "the stats file, replaced whole"},
	{SCMP_SYS(renameat), ALLOW, 0, {}, "the same (newer glibc)"},
	{SCMP_SYS(renameat2), ALLOW, 0, {}, "the same (newer glibc)"},
	{SCMP_SYS(unlinkat), ALLOW, 0, {}, "the same (newer glibc)"},
	{SCMP_SYS(chmod), ALLOW, 0, {}, "a session's socket mode"},
	{SCMP_SYS(fchmodat), ALLOW, 0, {}, "the same (newer glibc)"},
	{SCMP_SYS(umask), ALLOW, 0, {}, "a session's socket is made with its mode"},

	/* Sockets: its clients, upstreams and DNS. No raw or packet socket. */
	{SCMP_SYS(socket), ALLOW, 1, {EQ(0, AF_UNIX)}, "sessions' sockets, syslog, nscd"},
	{SCMP_SYS(socket), ALLOW, 1, {EQ(0, AF_INET)}, "upstreams, DNS"},
	{SCMP_SYS(socket), ALLOW, 1, {EQ(0, AF_INET6)}, "upstreams, DNS"},
	{SCMP_SYS(socket), SCMP_ACT_ERRNO(EAFNOSUPPORT), 1, {EQ(0, AF_NETLINK)},
	 "netlink: glibc asks with AI_ADDRCONFIG; the proxy needs none"},
	{SCMP_SYS(connect), ALLOW, 0, {}, "upstreams, DNS, syslog"},
	{SCMP_SYS(bind), ALLOW, 0, {}, "sessions' sockets"},
	{SCMP_SYS(listen), ALLOW, 0, {}, "sessions' sockets"},
	{SCMP_SYS(accept4), ALLOW, 0, {}, "clients"},
	{SCMP_SYS(sendto), ALLOW, 0, {}, "clients, upstreams, DNS, syslog"},
	{SCMP_SYS(recvfrom), ALLOW, 0, {}, "DNS"},
	{SCMP_SYS(sendmsg), ALLOW, 0, {}, "DNS"},
	{SCMP_SYS(recvmsg), ALLOW, 0, {}, "DNS; the control socket's lines with their listening sockets"},
	{SCMP_SYS(sendmmsg), ALLOW, 0, {}, "DNS: A and AAAA at once"},
	{SCMP_SYS(setsockopt), ALLOW, 0, {}, "the connect timeout"},
	{SCMP_SYS(getsockopt), ALLOW, 0, {}, "glibc"},
	{SCMP_SYS(getsockname), ALLOW, 0, {}, "the resolver"},
	{SCMP_SYS(getpeername), ALLOW, 0, {}, "glibc"},
	{SCMP_SYS(shutdown), ALLOW, 0, {}, "the end of one direction"},
	{SCMP_SYS(poll), ALLOW, 0, {}, "the loop, the resolver"},
	{SCMP_SYS(ppoll), ALLOW, 0, {}, "the same (newer glibc)"},
};

int
egress_proxy_filter_install(char *why, size_t why_len)
{
	scmp_filter_ctx ctx = scfilter_new(SCMP_ACT_KILL_PROCESS, why, why_len);

	if (ctx == NULL)
		return -1;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		/* A call this architecture lacks (open on arm64) resolves below 0. */
		if (rules[i].nr >= 0 &&
		    scfilter_add(ctx, rules[i].action, rules[i].nr, rules[i].nargs, rules[i].arg,
				 why, why_len) == -1) {
			seccomp_release(ctx);
			return -1;
		}
	}
	return scfilter_load(ctx, why, why_len);
}
