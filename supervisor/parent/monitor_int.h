/*
 * monitor_int.h - the monitor's memory, shared by its two parts:
 * monitor.c (the checks of the front's requests, the workers' lives) and
 * monitor_handover.c (a new front taking over the workers of one that
 * died). Nothing else includes it; monitor.h is the monitor's face.
 */
#ifndef SUPERVISOR_MONITOR_INT_H
#define SUPERVISOR_MONITOR_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "monitor.h"

/* One worker the parent started, kept until its directory is removed. */
struct mworker {
	struct mworker *next;
	uint32_t id;	 /* WORKER_STARTED's worker */
	uint32_t dir_id; /* WORKER_STARTED's dir */
	pid_t pid;
	int live;	 /* not reaped yet */
	int remove_at_exit; /* REMOVE_SESSION_DIR came while it ran */
	int pidfd;	 /* the claimed kernel's, or -1 */
	pid_t kernel;	 /* the claimed kernel, or 0 */
	int rescue;	 /* the parent's line to it (its fd 4), or -1 */
	char *dir;	 /* the session directory (owned), NULL once removed */
	uid_t uid;	 /* its kernel's identity (kernel_uid_range), or 0 */
};

/* A preprocess_command running for the front's PREPROCESS `seq`. */
struct mpre {
	struct mpre *next;
	uint32_t seq;
	pid_t pid;	 /* leads its own process group */
	int out, err;	 /* its stdout and stderr (regular files) */
	double deadline; /* monotonic: its group is killed then */
	int timed_out;
	int stale;	 /* its front is gone: its answer goes to no one */
};

/* A fork's copy running for the front's FORK_DIR `seq`. */
struct mfork {
	struct mfork *next;
	uint32_t seq;
	struct monitor_fork job;
	int stale;	 /* its front is gone: its copy is removed, unanswered */
};

struct monitor {
	const struct monitor_ops *ops;
	void *ctx;
	int front;
	enum net_mode mode;
	int max_workers;
	int max_kept;	  /* session directories not removed yet, live workers' too */
	uint32_t next_id;
	struct mworker *workers;
	struct mpre *pres;
	struct mfork *forks;
	int pre_max;	  /* 0: PREPROCESS is refused */
	int pre_timeout_s;
	long pre_max_bytes;
	int broken; /* a reply could not be sent: the front is taken for gone */
	int persist; /* monitor_set_persist: directories outlive the front */
};

/* Tell the front of kept directory `w->dir` (DIR_LEFT), named `name`. */
int monitor_tell_dir_left(struct monitor *m, const struct mworker *w,
			  const char name[PRIV_NAME_LEN + 1]);

#endif
