/*
 * sandbox.h - what a kernel may do: its identity, limits and network mode.
 *
 * Like OpenSSH's ssh-sandbox.h, a narrow interface with one file per
 * backend. sandbox.c is the entry every caller uses and calls down into
 * the backends, sandbox_isolated.c (user + network namespaces with
 * loopback) and seccomp: for the daemon's ipykernel, sandbox_seccomp.c
 * (the isolated Python startup, over an environment that
 * sandbox_immutable.c checks is immutable) and sandbox_seccomp_lock.c (the
 * filter of seccomp_filter.c installed once the kernel is ready, and
 * verified); for every other kernel, sandbox_seccomp_gate.c (the same
 * rules installed before the exec, bind and listen gated until READY). Below all of them, sandbox_steps.c
 * holds what every mode's child does (cgroup, rlimits, identity,
 * capabilities); nothing below calls back up.
 *
 * The steps, in the order kernel.c and kernel_child.c take them:
 *   sandbox_prepare()  worker, before the fork: check what START asked and
 *                      rewrite the kernel's argv/env (seccomp startup);
 *   sandbox_child()    kernel process, between fork and exec: enter the
 *                      cgroup, set limits, drop identity, make namespaces,
 *                      drop capabilities, set no_new_privs, Landlock, the
 *                      seccomp filters of a kernel other than ipykernel;
 *   sandbox_seccomp_gate_open(), sandbox_seccomp_gate_close()
 *                      worker, after the fork and after the handshake
 *                      (kernel.c, lifecycle.c): such a kernel's gate;
 *   sandbox_seccomp_lock_code(), sandbox_seccomp_verify()
 *                      worker, after the handshake and before READY
 *                      (lifecycle.c): make the kernel install its seccomp
 *                      filter, verify.
 * Every step fails closed: the kernel does not start, and the reason says
 * which step and which object.
 */
#ifndef WORKER_SANDBOX_H
#define WORKER_SANDBOX_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <linux/filter.h>

#include "cgroup.h"
#include "err.h"
#include "ipc_msg.h"
#include "netmode.h"

/* The directories an isolated kernel keeps of the ones it covers, at most. */
#define SANDBOX_KEEP_MAX 32
/* The private directories of an isolated kernel; the first SANDBOX_NTEMP are temporary ones. */
#define SANDBOX_NPRIVATE 5
#define SANDBOX_NTEMP 3

/* What START asked for (ipc_msg.h); owned by main.c. */
struct sandbox {
	enum net_mode mode;
	int has_id;		/* run the kernel as uid/gid (the worker is root) */
	uid_t uid;
	gid_t gid;
	rlim_t nofile;		/* 0: inherit */
	rlim_t fsize;		/* bytes; 0: inherit */
	struct cgroup_limits limits;
	int has_cgroup;
	struct cgroup_layout layout;
	char *cgroup_name;
	struct cgroup *cg;	/* the kernel's group, made by sandbox_cgroup_create */
	unsigned long oom_base; /* OOM kills counted before this kernel started */
	char *helper;		/* codeexec-seccomp.so beside our executable */
	int landlock_abi;	/* START's: 0, or confine the kernel at this ABI */
	char **hide_paths;	/* START's, taken by route.c */
	char *egress_socket;	/* START's: isolated kernels' way to the egress proxy; NULL: none */
};

/* START's hide_paths, at most. */
#define SANDBOX_HIDE_MAX 16

/*
 * What a kernel about to start needs, made by sandbox_prepare() and
 * released by sandbox_launch_free(). The child uses it without allocating.
 */
/* Connections of START's unix_fds a kernel inherits, at most. */
#define SANDBOX_UNIX_FDS 16

struct sandbox_launch {
	char **argv;		/* NULL: spec's argv (caller's) */
	char **envp;		/* NULL: spec's envp */
	char *start_dir;	/* NULL: the kernel's cwd */
	int cg_fds[CGROUP_NCTL]; /* cgroup.procs of the kernel's group */
	int n_cg_fds;
	/*
	 * isolated: the directories covered with a private tmpfs, the private
	 * ones (sandbox_private_dirs) then the daemon's (hide_dir, canonical,
	 * ancestors first), and those of them the kernel needs (its cwd,
	 * runtime_dir, interpreter or environment), bound back over the
	 * innermost cover holding each; everything else there is hidden
	 * (sandbox_isolated_keep.c).
	 */
	char *hide_dir[SANDBOX_HIDE_MAX];
	int n_hide_dir;
	char *keep_path[SANDBOX_KEEP_MAX]; /* canonical directories */
	int keep_under[SANDBOX_KEEP_MAX];  /* cover: index for sandbox_cover_path() */
	int n_keep;
	int pass_fd;		/* -1, or one more descriptor the kernel inherits
				 * (seccomp: its working directory); kernel.c closes it */
	int unix_fds[SANDBOX_UNIX_FDS]; /* START's unix_fds, connected; freeing ln closes them */
	int n_unix_fds;
	/*
	 * kernel_landlock: the ruleset (-1: none), what the child adds to it
	 * for the directories it mounts (sandbox_private_dirs' bits, then
	 * SANDBOX_LATE_PROC) and the rights it handles.
	 */
	int ll_fd;
	unsigned ll_late;
	uint64_t ll_rw;
	/*
	 * seccomp for a kernel other than the daemon's ipykernel: the gate's
	 * and the deny list's programs (.filter NULL: none), and the socket
	 * pair the child passes the gate's listener back on (-1: none).
	 */
	struct sock_fprog sc_gate, sc_deny;
	int sc_sock[2];
	/*
	 * isolated with an egress socket: its directory (-1: none) and its
	 * name there (in sb's string), which the forwarder connects to
	 * relative to that directory, hidden by the covers otherwise.
	 */
	int egress_dir;
	const char *egress_name;
};
#define SANDBOX_LATE_PROC (1u << SANDBOX_NPRIVATE)

/*
 * The directories an isolated kernel gets a private tmpfs on: the
 * temporary ones, then /run and /var/run, whose host sockets (D-Bus, a
 * database's, X's) it must not reach.
 */
extern const char *const sandbox_private_dirs[SANDBOX_NPRIVATE];

/* Failure stages reported by the child (kernel_child.h adds its own below 16). */
enum sandbox_stage {
	SANDBOX_STAGE_CGROUP = 16,
	SANDBOX_STAGE_RLIMIT,
	SANDBOX_STAGE_IDENTITY,
	SANDBOX_STAGE_USERNS,
	SANDBOX_STAGE_MAPS,
	SANDBOX_STAGE_LOOPBACK,
	SANDBOX_STAGE_CAPS,
	SANDBOX_STAGE_NNP,
	SANDBOX_STAGE_MOUNTS,
	SANDBOX_STAGE_NESTED,
	SANDBOX_STAGE_PIDNS,
	SANDBOX_STAGE_LANDLOCK,
	SANDBOX_STAGE_SECCOMP,
	SANDBOX_STAGE_EGRESS,
};

/*
 * Fill *sb (zeroed) from a decoded START (borrowed; ipc_decode.c checked its
 * fields). 0, or -1 with what this worker cannot do of it in why[why_len].
 */
int sandbox_from_start(struct sandbox *sb, const struct ipc_start *st, char *why, size_t why_len);
/* Release what sandbox_from_start() and the cgroup made; removes the group. */
void sandbox_free(struct sandbox *sb);

/*
 * Make the kernel's cgroup if START asked for one (once per worker; a
 * restarted kernel reuses it after killing what was left in it). 0, or -1
 * with why[why_len] set.
 */
int sandbox_cgroup_create(struct sandbox *sb, char *why, size_t why_len);

/*
 * Before the fork: check, and build *ln for a kernel running argv/envp in
 * cwd with its runtime files in runtime_dir. 0, or -1 with why[why_len]
 * set; *ln is released by sandbox_launch_free() either way.
 */
int sandbox_prepare(struct sandbox *sb, char **argv, char **envp, const char *cwd,
		    const char *runtime_dir, struct sandbox_launch *ln, char *why,
		    size_t why_len);
void sandbox_launch_free(struct sandbox_launch *ln);

/*
 * In the child, after fork and before exec: async-signal-safe only (the
 * worker has ZeroMQ threads). 0, or -1 with errno set and *stage saying
 * which step failed.
 */
int sandbox_child(const struct sandbox *sb, const struct sandbox_launch *ln, int *stage);
/* What failed at `stage`, for the START_FAILED message. */
const char *sandbox_stage_text(int stage);

/* The kernel ended: 1 if its group's memory limit killed something. */
int sandbox_oom_killed(struct sandbox *sb);

/*
 * kernel_landlock (sandbox_landlock.c), in every mode, before the fork:
 * build the kernel's ruleset into ln->ll_fd. 0, or -1 with why[why_len].
 */
int sandbox_landlock_prepare(const struct sandbox *sb, char **argv, char **envp, const char *cwd,
			     const char *runtime_dir, struct sandbox_launch *ln, char *why,
			     size_t why_len);
/* In the child, last before the exec: confine it. 0, or -1 with errno. */
int sandbox_landlock_child(const struct sandbox_launch *ln);

/* ---- The per-mode backends: prepare and child are sandbox.c's to call ---- */

/*
 * isolated: new user, network and mount namespaces, loopback up, private
 * /tmp, /var/tmp, /dev/shm, /run and the daemon's directories, no further
 * user namespace (sandbox_isolated.c).
 */
int sandbox_isolated_child(const struct sandbox *sb, const struct sandbox_launch *ln, int *stage);
/*
 * isolated, before the fork: what its mount namespace covers and keeps
 * (*ln). 0, or -1 with why[why_len] (too many directories to keep).
 */
int sandbox_isolated_prepare(const struct sandbox *sb, char **argv, char **envp, const char *cwd,
			     const char *runtime_dir, struct sandbox_launch *ln, char *why,
			     size_t why_len);
/* Cover c of ln: a private directory, then the daemon's (sandbox_isolated_keep.c). */
const char *sandbox_cover_path(const struct sandbox_launch *ln, int c);

/*
 * seccomp: whether argv launches ipykernel ("python -m ipykernel_launcher"
 * or "-m ipykernel", or the daemon's own "python -c ... from ipykernel
 * import kernelapp ...", kernel_env.c's), the one kernel whose isolated
 * startup installs its filter itself once ready (sandbox_seccomp.c).
 */
int sandbox_seccomp_locks_itself(char **argv);
/*
 * seccomp for the daemon's ipykernel (sandbox_seccomp.c): check the
 * environment and build the isolated Python startup into *ln. 0, or -1
 * with why[why_len].
 */
int sandbox_seccomp_prepare(struct sandbox *sb, char **argv, char **envp, const char *cwd,
			    const char *runtime_dir, struct sandbox_launch *ln, char *why,
			    size_t why_len);
/* The code the worker runs (silently) in a ready kernel to lock it (sandbox_seccomp_lock.c). */
const char *sandbox_seccomp_lock_code(void);
/*
 * After the lock code ran: verify from outside that every thread of `pid`
 * shows Seccomp: 2 and NoNewPrivs: 1. 0, or -1 with why[why_len].
 */
int sandbox_seccomp_verify(pid_t pid, char *why, size_t why_len);

/* A kernel's seccomp gate, on the worker's side (sandbox_seccomp_gate.c). */
struct sandbox_gate;
/*
 * seccomp for any other kernel, before the fork: its two filters and the
 * socket pair into *ln. 0, or -1 with why[why_len].
 */
int sandbox_seccomp_gate_prepare(struct sandbox_launch *ln, char *why, size_t why_len);
/* In the child, last before the exec: install both, pass the listener. 0, or -1 with errno. */
int sandbox_seccomp_gate_child(const struct sandbox_launch *ln);
/*
 * After the fork: take the listener the child passed and let its bind and
 * listen through from a thread. Caller owns the gate; NULL with why[why_len].
 */
struct sandbox_gate *sandbox_seccomp_gate_open(struct sandbox_launch *ln, char *why,
					       size_t why_len);
/* The kernel is ready: end the thread and close the gate for good. *gp NULL; NULL is fine. */
void sandbox_seccomp_gate_close(struct sandbox_gate **gp);
/*
 * After the close, with a uid of the kernel's own (kernel_uid_range): 0 if
 * no IP socket of that uid is left off loopback (a listener its start-up
 * made would outlive the gate). -1 with why[why_len]. With a shared uid,
 * not known.
 */
int sandbox_seccomp_gate_check(const struct sandbox *sb, pid_t pid, char *why, size_t why_len);

#endif
