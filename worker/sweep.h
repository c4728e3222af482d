/*
 * sweep.h - `codeexec-worker -r FIRST[-LAST]`: make kernel uids clean
 * before the supervisor hands them out again (supervisor/parent/uid.h).
 *
 * For each uid, a child becomes that uid (gid the same, no other group),
 * drops every capability (kill(-1) with CAP_KILL would end the whole
 * host), kills every process of the uid with kill(-1, SIGKILL) until none
 * is left alive, then removes what the uid owns in the places every uid
 * may write: /tmp, /var/tmp, /dev/shm and /dev/mqueue (descending only into
 * directories the uid could write to, never following a link), and the
 * System V shared memory, semaphores and message queues it owns or made.
 */
#ifndef WORKER_SWEEP_H
#define WORKER_SWEEP_H

/* Sweep the uids of `range`; the exit status: 0 when every one is clean. */
int sweep_main(const char *range);

#endif
