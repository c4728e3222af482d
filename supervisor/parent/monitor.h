/*
 * monitor.h - the privileged parent's side of priv_msg.h: what it knows of
 * the workers it started, and the check of every request of the front
 * against that, in the manner of OpenSSH's monitor.c.
 *
 * The front is not trusted. A request that names a worker or a directory
 * the parent never issued, one that is out of state (ending a worker that
 * has exited, removing the directory of a live one or a removed one,
 * killing a kernel never claimed), a sandbox setting the configuration does
 * not allow, a malformed record, a message of the parent's own range:
 * each gets REFUSED and one log line, and nothing else happens. The monitor
 * takes no uid and no path from the front; a pid only to check it against
 * the parent's own children (CLAIM_KERNEL).
 *
 * The acts themselves (fork+exec, kill, remove) are the caller's, through
 * struct monitor_ops, so that the checks can be run against a socketpair
 * and stand-in acts (tests/unit/test_monitor.c plays a compromised front).
 */
#ifndef SUPERVISOR_MONITOR_H
#define SUPERVISOR_MONITOR_H

#include <stddef.h>
#include <sys/types.h>

#include "fs_copy.h"
#include "priv_msg.h"

/* What the parent does once a request passed the checks. `ctx` is borrowed. */
/* A fork's copy under way (monitor_ops.fork_dir). */
struct monitor_fork {
	pid_t pid;			/* the child copying, in a process group of its own */
	int result_fd;			/* where it writes how the copy went */
	char *dir;			/* the new directory (owned) */
	char name[PRIV_NAME_LEN + 1];	/* its name under state_dir/sessions */
	uid_t uid;			/* its kernel identity, or 0 */
};

struct monitor_ops {
	/*
	 * Start a worker and write its START (identity, directories, cgroup,
	 * limits: the implementation's, from the configuration). 0 with *pid,
	 * *front_fd (the worker socket's other end; the monitor passes it on
	 * and closes it), *rescue_fd (the parent's line to it, IPC_RESCUE_FD;
	 * the monitor's until the worker is reaped, or -1: none), *dir (the session directory; the monitor owns it),
	 * name (its last component, PRIV_NAME_LEN hex digits) and *uid (the
	 * kernel's identity, or 0), or -1 with why[why_len]. `reuse` (NULL: a
	 * new one) is a kept directory, of a reaped worker whose kernel was
	 * `reuse_uid`: the new worker works there with that identity, and *dir
	 * is a copy of it.
	 */
	int (*spawn)(void *ctx, const char *reuse, uid_t reuse_uid, pid_t *pid, int *front_fd,
		     int *rescue_fd, char **dir, char name[PRIV_NAME_LEN + 1], uid_t *uid, char *why,
		     size_t why_len);
	/* SIGKILL worker `pid`, a child not reaped yet. */
	void (*kill_worker)(void *ctx, pid_t pid);
	/*
	 * Check that `kernel` is a live child of worker `worker` leading its own
	 * process group and pin it: 1 with *pidfd (the monitor owns it), 0 if it
	 * is already gone (*pidfd -1), -1 with why[why_len] if it is not that
	 * worker's kernel (kernelpid_claim).
	 */
	int (*claim_kernel)(void *ctx, pid_t worker, pid_t kernel, int *pidfd, char *why,
			    size_t why_len);
	/* Kill the group of a claimed kernel through its pidfd (kernelpid_kill). */
	void (*kill_kernel)(void *ctx, int pidfd, pid_t kernel);
	/* Worker `pid` was reaped: release what the implementation gave it. */
	void (*worker_gone)(void *ctx, pid_t pid);
	/* Remove session directory `dir` (a path spawn returned; borrowed). */
	void (*remove_dir)(void *ctx, const char *dir);
	/*
	 * Start preprocess_command on the code in `code_fd` (borrowed) for
	 * request `p`, in a process group of its own: 0 with *pid, *out_fd and
	 * *err_fd (the regular files its stdout and stderr go to; the monitor
	 * owns them), or -1 with why[why_len]. NULL: never configured.
	 */
	int (*preprocess)(void *ctx, const struct priv_preprocess *p, int code_fd, pid_t *pid,
			  int *out_fd, int *err_fd, char *why, size_t why_len);
	/* SIGKILL process group `pgid` (a preprocess_command not reaped yet). */
	void (*kill_group)(void *ctx, pid_t pgid);
	/*
	 * Start copying session directory `src` (borrowed) into a new one for
	 * a fork (fs_copy.h), with a kernel identity of its own, in a child of
	 * ours, so that the loop does not wait for the copy: 0 with *job, or
	 * -1 with why[why_len] and nothing left behind. NULL: forks are refused.
	 */
	int (*fork_dir)(void *ctx, const char *src, struct monitor_fork *job, char *why,
			size_t why_len);
	/*
	 * The copy's child, job->pid, was reaped with `status`: 0 with *st and
	 * job->dir (then the monitor's) kept, reserved for job->uid; or -1
	 * with why[why_len], the copy on its way out. Either way job holds
	 * nothing more to free.
	 */
	int (*fork_done)(void *ctx, struct monitor_fork *job, int status, struct fs_copy_stats *st,
			 char *why, size_t why_len);
	/* Live worker `pid` runs MCP session `session` of `identity` (EGRESS_BIND). */
	void (*egress_bind)(void *ctx, pid_t pid, const char *session, const char *identity);
};

struct monitor;

/*
 * How long the parent waits for room on the front's full socket before it
 * takes the front for gone. Bursts fill it through no fault of the front's:
 * a start after a restart names every kept directory (DIR_LEFT) before the
 * new front reads a word.
 */
#define FRONT_FULL_MS 5000

/*
 * A monitor answering the front on `front` (a SOCK_SEQPACKET socket,
 * borrowed, non-blocking: a front that leaves its socket full for
 * FRONT_FULL_MS is taken for gone rather than let stall the parent), starting at most `max_workers` live workers in network mode
 * `mode` (the configured one). `ops` and `ctx` are borrowed. Caller owns
 * the result (monitor_free).
 */
struct monitor *monitor_new(const struct monitor_ops *ops, void *ctx, int front,
			    enum net_mode mode, int max_workers);
/* Close every pidfd and free what the monitor holds; *m becomes NULL. */
/*
 * Directories of reaped workers that sessions keep (hibernated ones, whose
 * next worker gets them): the monitor keeps up to this many more than
 * twice max_workers before it refuses new workers.
 */
void monitor_set_kept(struct monitor *m, int hibernated);
/*
 * persist_sessions: session directories are never removed because the
 * front is gone (monitor_front_gone, a worker reaped after it); the next
 * front gets them (monitor_adopt_dir) and removes what its journal does
 * not name.
 */
void monitor_set_persist(struct monitor *m);
/*
 * Session directory `dir` (copied; state_dir/sessions/`name`), left by an
 * earlier instance or front and checked by the caller (dirs_left.h), with
 * kernel identity `uid` (0: the daemon's): kept as the directory of a
 * reaped worker and told to the front (DIR_LEFT). 0, or -1 when the front
 * cannot be reached.
 */
int monitor_adopt_dir(struct monitor *m, const char *dir, const char name[PRIV_NAME_LEN + 1],
		      uid_t uid);
void monitor_free(struct monitor **m);

/*
 * Accept PREPROCESS: at most `max_running` commands at once, each killed
 * (its group) after `timeout_s` seconds (checked by monitor_tick), and
 * failed when its stdout or stderr holds more than `max_bytes`. Until this
 * is called, PREPROCESS is refused (preprocess_command is not set).
 */
void monitor_set_preprocess(struct monitor *m, int max_running, int timeout_s, long max_bytes);

/* Kill the group of every preprocess_command past its time (the loop's tick). */
void monitor_tick(struct monitor *m);

/* preprocess_commands started and not reaped yet. */
int monitor_preprocessing(const struct monitor *m);

/*
 * Read one request from the front and answer it. 0, or -1 when the front is
 * gone (EOF, or a read or write error, logged; also once any reply, a
 * WORKER_EXITED included, could not be sent).
 */
int monitor_request(struct monitor *m);

/*
 * Send `msg` (and descriptor `fd` unless -1, borrowed) to the front, as
 * every answer of the monitor goes: waiting FRONT_FULL_MS at most for room.
 * 0, or -1 (logged) when the front cannot be reached, which is then taken
 * for gone: nothing more is sent and monitor_broken says so.
 */
int monitor_send(struct monitor *m, const struct priv_msg *msg, int fd);
/* Whether a send failed: the front is to be ended. */
int monitor_broken(const struct monitor *m);

/*
 * A child was reaped. If it is one of our workers: its claimed kernel's
 * group is killed, ops->worker_gone is called and the front is told
 * (WORKER_EXITED). If it is a preprocess_command: its group is killed (what
 * it left running) and the front gets PREPROCESSED with its stdout (exit
 * 0) or its stderr. Returns 1 if it was ours, 0 if not.
 */
int monitor_child_exited(struct monitor *m, pid_t pid, int status);

/*
 * The front is gone or we stop: SIGKILL every live worker and its claimed
 * kernel's group, and every preprocess_command's group. Their reaping (monitor_child_exited) does the rest.
 * Returns how many workers were live.
 */
int monitor_end_all(struct monitor *m);

/*
 * The front is gone: nothing more is sent to it (what would be is dropped
 * without a word), and every session directory of a reaped worker is
 * removed now. Directories of live workers go once they are reaped.
 * (Neither with monitor_set_persist.)
 */
void monitor_front_gone(struct monitor *m);

/*
 * The front died and persist_sessions keeps its sessions: its workers and
 * their kernels go on for the next front (monitor_hand_over); nothing more
 * is sent to the dead one; a preprocess_command or a fork's copy it asked
 * for is killed, its answer dropped (the copy removed).
 */
void monitor_keep_workers(struct monitor *m);
/*
 * Serve the new front on `front` (borrowed, as monitor_new's): each live
 * worker kept gets a new socket, whose other end the front gets with
 * WORKER_LEFT (one that cannot, or whose session closed meanwhile, is
 * killed); each kept directory is named with DIR_LEFT. How many workers
 * were handed over, or -1 when the front cannot be reached.
 */
int monitor_hand_over(struct monitor *m, int front);

/* Workers spawned and not reaped yet. */
int monitor_live(const struct monitor *m);

#endif
