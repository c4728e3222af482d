/*
 * progress.h - waiting for a job on behalf of a client: live progress
 * notifications while it runs, and cancellation when the client leaves.
 */
#ifndef SUPERVISOR_PROGRESS_H
#define SUPERVISOR_PROGRESS_H

struct tool_call;
struct job;

/*
 * Wait up to `seconds` (<0: until it ends) for job `j`. When the client
 * asked for progress, send what the code printed as it comes, and at least
 * every progress_interval_s. When the client goes away, cancel the job.
 * Lock held (released while waiting). Returns nonzero once the job ended.
 */
int progress_wait(struct tool_call *tc, struct job *j, double seconds);

#endif
