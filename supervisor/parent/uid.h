/*
 * uid.h - the kernel identities of kernel_uid_range.
 *
 * A uid is handed out in rotation through the range (never the lowest free
 * one, so a released uid rests as long as the range allows), and only when
 * clean: when a worker is done with it, it is dirty until a sweeper
 * (`codeexec-worker -r UID`, spawned from the main loop) has killed every
 * process of the uid and removed every file the uid owns in /tmp, /var/tmp
 * and /dev/shm. A uid whose sweep fails is retried and not handed out
 * meanwhile. The whole range is swept at start-up (what a daemon killed
 * outright left) and at stop.
 *
 * Called with the pool's lock held, from the main loop (the spawns need the
 * capabilities only its thread is sure to hold).
 */
#ifndef SUPERVISOR_UID_H
#define SUPERVISOR_UID_H

#include <sys/types.h>

struct config;

/* Remember the range and the sweeper; sweep the whole range (blocking). */
void uid_init(const struct config *cfg, const char *worker_path);
/* A clean uid of the range, now in use; 0 if none is clean. */
uid_t uid_take(void);
/*
 * A worker is done with uid (0: no-op): it is dirty until swept, and is
 * swept only once `leftover` (its working directory, being removed
 * elsewhere; NULL: none; copied) is gone.
 */
void uid_release(uid_t uid, const char *leftover);
/*
 * Take back uid (0: no-op, 0), released with `leftover` still in place: the
 * kept session directory a new worker of the same session gets. 0, or -1
 * if uid is not waiting for that path (swept, or taken again).
 */
int uid_retake(uid_t uid, const char *leftover);
/*
 * uid owns session directory `dir` (copied), left by an earlier instance
 * or front and kept (dirs_left.h): reserved for it as uid_release does,
 * so that only that session's next worker (uid_retake) gets it. Before
 * uid_init it waits for the start-up sweep.
 */
void uid_keep_for(uid_t uid, const char *dir);
/* Spawn sweepers for dirty uids (main loop). */
void uid_tick(void);
/* pid exited with status: 1 if it was a sweeper (then handled). */
int uid_child_exited(pid_t pid, int status);
/* At stop: sweep every uid not clean yet and wait for it (bounded). */
void uid_finish(void);

#endif
