/*
 * progress.h - running a job on behalf of a waiting client: live progress
 * notifications while it runs, and cancellation when the client leaves.
 */
#ifndef SUPERVISOR_PROGRESS_H
#define SUPERVISOR_PROGRESS_H

struct call;
struct tool_call;
struct job;

/*
 * Drive job `j` (job_run: the caller is its driver) for up to `seconds`
 * (<0: until it ends). When the client asked for progress, send what the
 * code printed as it comes, and at least every progress_interval_s; while
 * it waits for a kernel, its place in the pool's queue ("waiting for a
 * kernel: position 3 of 7") whenever it moves, at most one notification
 * per 0.25 s. Sleeps between them: the main loop watches the client's
 * socket (client_watch.h) and wakes it when the client hangs up; then
 * cancel the job and give it a while to stop. Lock held (released
 * while waiting). Returns nonzero once the job ended; 0
 * leaves it running, for the caller to job_background().
 *
 * A kernel's input(): with tc->elicit, the client is asked on its stream
 * and its answer taken as it comes (mcp_elicit.h); with tc->input_required,
 * the wait ends with PROGRESS_INPUT, the prompt named by the call's
 * input_id, for the caller to answer with an InputRequiredResult and
 * job_background(); otherwise, or once the wait ends without the job, the
 * prompt is answered with end of input.
 */
#define PROGRESS_INPUT 2
int progress_wait(struct tool_call *tc, struct job *j, double seconds);
/* Name call c's prompt by a fresh, unguessable id (c->input_id). Lock held. */
void progress_input_id(struct call *c);

#endif
