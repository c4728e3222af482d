/* front_filter.c - see front_filter.h. The rules are the table below. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <seccomp.h>

#include "front_filter.h"
#include "log.h"
#include "scfilter.h"

/*
 * Namespace flags: with them clone() makes a new namespace, not just a
 * thread. The kernel refuses CLONE_NEWUSER and CLONE_NEWPID beside
 * CLONE_THREAD, and CLONE_NEWNS beside CLONE_FS, but takes CLONE_NEWNET,
 * CLONE_NEWIPC and others with a thread, so the mask names them all.
 */
#define NS_FLAGS                                                                                  \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |              \
	 CLONE_NEWUTS | CLONE_NEWCGROUP)

#define ALLOW SCMP_ACT_ALLOW

#define EQ(i, v) {(i), SCMP_CMP_EQ, (v), 0}
#define SELF_PID ((scmp_datum_t)-1) /* replaced by the caller's pid when the filter is built */

/*
 * The allow-list. A call that no line allows kills the process. Lines of the
 * same call with conditions are alternatives (any may match). The calls were
 * measured with strace on the daemon's own threads (workers and builders are
 * other processes) through the system tests, grouped by purpose below; the
 * glibc variants of each (open/openat, stat/newfstatat/statx, ...) are here
 * too, so a libc update does not kill the front.
 */
static const struct {
	int nr;
	uint32_t action;
	unsigned nargs;
	struct scmp_arg_cmp arg[2];
	const char *why;
} rules[] = {
	/* Memory. */
	{SCMP_SYS(brk), ALLOW, 0, {}, "malloc"},
	{SCMP_SYS(mmap), ALLOW, 0, {}, "malloc arenas, thread stacks, dlopen of NSS modules"},
	{SCMP_SYS(munmap), ALLOW, 0, {}, "free, thread exit"},
	{SCMP_SYS(mprotect), ALLOW, 0, {}, "malloc arenas, stack guard pages, dlopen"},
	{SCMP_SYS(mremap), ALLOW, 0, {}, "realloc of large blocks"},
	{SCMP_SYS(madvise), ALLOW, 0, {}, "glibc frees the stacks of exited threads"},

	/* Threads: civetweb's, the pool's, libcurl's resolver. */
	{SCMP_SYS(clone), ALLOW, 1, {{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD | NS_FLAGS, CLONE_THREAD}},
	 "threads only (CLONE_THREAD, no namespace flag): never a new process"},
	{SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS), 0, {},
	 "its flags are in memory, which seccomp cannot read: ENOSYS makes glibc use clone"},
	{SCMP_SYS(set_robust_list), ALLOW, 0, {}, "every new thread"},
	{SCMP_SYS(rseq), ALLOW, 0, {}, "every new thread (glibc 2.35)"},
	{SCMP_SYS(set_tid_address), ALLOW, 0, {}, "thread start-up"},
	{SCMP_SYS(futex), ALLOW, 0, {}, "mutexes, condition variables, joins"},
	{SCMP_SYS(get_robust_list), ALLOW, 0, {}, "glibc, on robust mutexes"},
	{SCMP_SYS(sched_yield), ALLOW, 0, {}, "spin locks of libraries"},
	{SCMP_SYS(sched_getaffinity), ALLOW, 0, {}, "sysconf(_SC_NPROCESSORS_ONLN)"},
	{SCMP_SYS(exit), ALLOW, 0, {}, "thread exit"},
	{SCMP_SYS(exit_group), ALLOW, 0, {}, "process exit"},
	{SCMP_SYS(gettid), ALLOW, 0, {}, "log lines, raise()"},
	{SCMP_SYS(getpid), ALLOW, 0, {}, "syslog's LOG_PID, raise()"},
	{SCMP_SYS(getppid), ALLOW, 0, {}, "noticing that the parent died"},
	{SCMP_SYS(prctl), ALLOW, 1, {EQ(0, PR_SET_NAME)}, "civetweb names its threads"},
	{SCMP_SYS(prctl), ALLOW, 1, {EQ(0, PR_GET_NAME)}, "thread names"},

	/* Signals: SIGHUP reload, SIGTERM, SIGPIPE ignored, abort(). */
	{SCMP_SYS(rt_sigaction), ALLOW, 0, {}, "signal handlers; libcurl ignores SIGPIPE"},
	{SCMP_SYS(rt_sigprocmask), ALLOW, 0, {}, "thread creation blocks signals"},
	{SCMP_SYS(rt_sigreturn), ALLOW, 0, {}, "return from a signal handler"},
	{SCMP_SYS(restart_syscall), ALLOW, 0, {}, "a call interrupted by a signal resumes"},
	{SCMP_SYS(sigaltstack), ALLOW, 0, {}, "sanitizers and stack overflow handlers"},
	{SCMP_SYS(kill), ALLOW, 1, {EQ(0, SELF_PID)}, "signals to itself only"},
	{SCMP_SYS(tgkill), ALLOW, 1, {EQ(0, SELF_PID)},
	 "raise() and abort() signal a thread of this process only"},

	/* Time. */
	{SCMP_SYS(clock_gettime), ALLOW, 0, {}, "when the vDSO is not used"},
	{SCMP_SYS(clock_getres), ALLOW, 0, {}, "when the vDSO is not used"},
	{SCMP_SYS(gettimeofday), ALLOW, 0, {}, "when the vDSO is not used"},
	{SCMP_SYS(time), ALLOW, 0, {}, "when the vDSO is not used"},
	{SCMP_SYS(clock_nanosleep), ALLOW, 0, {}, "nanosleep() and usleep() of glibc"},
	{SCMP_SYS(nanosleep), ALLOW, 0, {}, "sleeps of older glibc"},

	/* Files: configuration reload, log file, /proc/self, /etc of libc and TLS. */
	{SCMP_SYS(openat), ALLOW, 0, {}, "reload, log file, /proc/self/fd, /etc (NSS, TLS)"},
	{SCMP_SYS(open), ALLOW, 0, {}, "open() of older glibc"},
	{SCMP_SYS(close), ALLOW, 0, {}, "every descriptor"},
	{SCMP_SYS(read), ALLOW, 0, {}, "files, sockets, the self-pipe"},
	{SCMP_SYS(readv), ALLOW, 0, {}, "stdio"},
	{SCMP_SYS(pread64), ALLOW, 0, {}, "glibc reads ELF headers on dlopen"},
	{SCMP_SYS(write), ALLOW, 0, {}, "files, sockets, stderr, the self-pipe"},
	{SCMP_SYS(writev), ALLOW, 0, {}, "stdio, civetweb"},
	{SCMP_SYS(pwrite64), ALLOW, 0, {}, "positioned writes"},
	{SCMP_SYS(lseek), ALLOW, 0, {}, "stdio, readdir"},
	{SCMP_SYS(fstat), ALLOW, 0, {}, "stdio"},
	{SCMP_SYS(stat), ALLOW, 0, {}, "stat() of older glibc"},
	{SCMP_SYS(lstat), ALLOW, 0, {}, "lstat() of older glibc"},
	{SCMP_SYS(newfstatat), ALLOW, 0, {}, "stat() and fstat() of glibc 2.33 on"},
	{SCMP_SYS(statx), ALLOW, 0, {}, "stat() where glibc uses statx"},
	{SCMP_SYS(fstatfs), ALLOW, 0, {}, "opendir() checks the file system"},
	{SCMP_SYS(statfs), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getdents64), ALLOW, 0, {}, "readdir() of /proc/self/fd (connection census)"},
	{SCMP_SYS(readlink), ALLOW, 0, {}, "/proc/self/fd/N names a socket (connection census)"},
	{SCMP_SYS(readlinkat), ALLOW, 0, {}, "as above, newer glibc"},
	{SCMP_SYS(access), ALLOW, 0, {}, "libcurl and NSS probe files"},
	{SCMP_SYS(faccessat), ALLOW, 0, {}, "as above, newer glibc"},
	{SCMP_SYS(faccessat2), ALLOW, 0, {}, "as above, newer glibc"},
	{SCMP_SYS(fcntl), ALLOW, 0, {}, "close-on-exec, non-blocking sockets"},
	{SCMP_SYS(dup), ALLOW, 0, {}, "descriptors"},
	{SCMP_SYS(dup2), ALLOW, 0, {}, "log file on stderr"},
	{SCMP_SYS(dup3), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(pipe2), ALLOW, 0, {}, "self-pipes (signals, civetweb, libcurl)"},
	{SCMP_SYS(pipe), ALLOW, 0, {}, "pipe() of older glibc"},
	{SCMP_SYS(fsync), ALLOW, 0, {}, "state files written whole"},
	{SCMP_SYS(fdatasync), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(ftruncate), ALLOW, 0, {}, "files rewritten in place"},
	{SCMP_SYS(memfd_create), ALLOW, 0, {}, "the code passed to preprocess_command (PREPROCESS)"},
	{SCMP_SYS(unlink), ALLOW, 0, {}, "stale control socket, temporary files"},
	{SCMP_SYS(unlinkat), ALLOW, 0, {}, "as above, newer glibc"},
	{SCMP_SYS(rename), ALLOW, 0, {}, "files replaced atomically"},
	{SCMP_SYS(renameat), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(renameat2), ALLOW, 0, {}, "as above, newer glibc"},
	{SCMP_SYS(mkdir), ALLOW, 0, {}, "its own directories"},
	{SCMP_SYS(mkdirat), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getcwd), ALLOW, 0, {}, "libraries resolving relative paths"},
	{SCMP_SYS(umask), ALLOW, 0, {}, "files it makes, the control socket"},
	{SCMP_SYS(ioctl), ALLOW, 1, {EQ(1, TCGETS)}, "isatty() of stdio"},
	{SCMP_SYS(ioctl), ALLOW, 1, {EQ(1, FIONREAD)}, "bytes waiting on a socket (libcurl)"},
	{SCMP_SYS(ioctl), ALLOW, 1, {EQ(1, FIONBIO)}, "non-blocking sockets (civetweb)"},

	/* Sockets: civetweb, the control socket, workers' sockets, libcurl, syslog. */
	{SCMP_SYS(socket), ALLOW, 1, {EQ(0, AF_UNIX)}, "control socket, syslog, nscd"},
	{SCMP_SYS(socket), ALLOW, 1, {EQ(0, AF_INET)}, "listener, libcurl, DNS"},
	{SCMP_SYS(socket), ALLOW, 1, {EQ(0, AF_INET6)}, "listener, libcurl, DNS"},
	{SCMP_SYS(socket), SCMP_ACT_ERRNO(EPERM), 1, {EQ(0, AF_NETLINK)},
	 "getaddrinfo() asks the kernel for the host's addresses and does without"},
	{SCMP_SYS(socketpair), ALLOW, 1, {EQ(0, AF_UNIX)}, "wake-up pairs (libcurl, civetweb)"},
	{SCMP_SYS(bind), ALLOW, 0, {}, "the listener and the control socket"},
	{SCMP_SYS(listen), ALLOW, 0, {}, "the listener and the control socket"},
	{SCMP_SYS(accept), ALLOW, 0, {}, "civetweb's master thread"},
	{SCMP_SYS(accept4), ALLOW, 0, {}, "control socket connections"},
	{SCMP_SYS(connect), ALLOW, 0, {}, "libcurl, DNS, syslog, nscd"},
	{SCMP_SYS(shutdown), ALLOW, 0, {}, "civetweb closes, the census ends surplus connections"},
	{SCMP_SYS(getsockname), ALLOW, 0, {}, "the connection census, civetweb, libcurl"},
	{SCMP_SYS(getpeername), ALLOW, 0, {}, "the connection census, control socket peers"},
	{SCMP_SYS(getsockopt), ALLOW, 0, {}, "SO_ERROR of connects, SO_PEERCRED, SO_PEERGROUPS"},
	{SCMP_SYS(setsockopt), ALLOW, 0, {}, "keepalive, TCP_NODELAY, SO_REUSEADDR, timeouts"},
	{SCMP_SYS(sendto), ALLOW, 0, {}, "send() on every socket, DNS, syslog"},
	{SCMP_SYS(recvfrom), ALLOW, 0, {}, "recv() on every socket, DNS"},
	{SCMP_SYS(sendmsg), ALLOW, 0, {}, "IPC frames to workers"},
	{SCMP_SYS(recvmsg), ALLOW, 0, {}, "worker sockets passed by the parent (SCM_RIGHTS)"},
	{SCMP_SYS(sendmmsg), ALLOW, 0, {}, "glibc's resolver sends A and AAAA queries at once"},
	{SCMP_SYS(recvmmsg), ALLOW, 0, {}, "as above, replies"},
	{SCMP_SYS(sendfile), ALLOW, 0, {}, "civetweb sends files with it"},

	/* Waiting. */
	{SCMP_SYS(poll), ALLOW, 0, {}, "the main loop, civetweb, libcurl"},
	{SCMP_SYS(ppoll), ALLOW, 0, {}, "poll() where glibc uses ppoll"},
	{SCMP_SYS(select), ALLOW, 0, {}, "libraries"},
	{SCMP_SYS(pselect6), ALLOW, 0, {}, "select() where glibc uses pselect6"},
	{SCMP_SYS(epoll_create1), ALLOW, 0, {}, "libraries' event loops"},
	{SCMP_SYS(epoll_ctl), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(epoll_wait), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(epoll_pwait), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(eventfd2), ALLOW, 0, {}, "libcurl's multi wake-up"},

	/* Identity, read only, and randomness. */
	{SCMP_SYS(getuid), ALLOW, 0, {}, "libcurl looks up the home directory"},
	{SCMP_SYS(geteuid), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getgid), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getegid), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getresuid), ALLOW, 0, {}, "checking its own identity after the drop"},
	{SCMP_SYS(getresgid), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getgroups), ALLOW, 0, {}, "as above"},
	{SCMP_SYS(getrandom), ALLOW, 0, {}, "session ids, json-c's hash seed, TLS"},
	{SCMP_SYS(uname), ALLOW, 0, {}, "libcurl's and OpenSSL's version strings"},
	{SCMP_SYS(sysinfo), ALLOW, 0, {}, "glibc's memory figures"},
	{SCMP_SYS(getrusage), ALLOW, 0, {}, "its own usage"},
	{SCMP_SYS(prlimit64), ALLOW, 2, {EQ(0, 0), EQ(2, 0)}, "its own limits, read only"},
	{SCMP_SYS(getrlimit), ALLOW, 0, {}, "its own limits, read only (older glibc)"},
};

/* The filter for a process of pid self, ready to load or export; NULL with why set. */
static scmp_filter_ctx
build(pid_t self, char *why, size_t why_len)
{
	scmp_filter_ctx ctx = scfilter_new(SCMP_ACT_KILL_PROCESS, why, why_len);

	if (ctx == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct scmp_arg_cmp arg[2];

		/* A call this architecture lacks (open on arm64) resolves below 0. */
		if (rules[i].nr < 0)
			continue;
		memcpy(arg, rules[i].arg, sizeof(arg));
		for (unsigned a = 0; a < rules[i].nargs; a++)
			if (arg[a].op == SCMP_CMP_EQ && arg[a].datum_a == SELF_PID)
				arg[a].datum_a = (scmp_datum_t)self;
		if (scfilter_add(ctx, rules[i].action, rules[i].nr, rules[i].nargs, arg, why,
				 why_len) == -1) {
			seccomp_release(ctx);
			return NULL;
		}
	}
	return ctx;
}

int
front_filter_install(char *why, size_t why_len)
{
	scmp_filter_ctx ctx = build(getpid(), why, why_len);

	if (ctx == NULL || scfilter_load(ctx, why, why_len) == -1)
		return -1;
	return 0;
}

int
front_filter_export(int fd)
{
	char err[256];
	scmp_filter_ctx ctx = build(getpid(), err, sizeof(err));

	if (ctx == NULL)
		return -1;
	int rc = seccomp_export_pfc(ctx, fd);
	seccomp_release(ctx);
	return rc == 0 ? 0 : -1;
}
