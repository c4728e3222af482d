/*
 * session_state.h - a session's kernel state kept across the loss of its
 * kernel: automatic checkpoints, and the checkpoint loaded into the kernel
 * that replaces a dead or killed one.
 *
 * After an execution of the agent's code, when the session's last
 * automatic checkpoint is older than checkpoint.interval_s (or there is
 * none), the saver thread takes one (checkpoint_cell.h, op "autosave")
 * once the answer is out, the session staying busy meanwhile so that a
 * call that comes waits for it. When an execution ends in a way that may
 * have replaced the kernel (it died, was killed, or a timeout or cancel
 * may have ended it), the session's next execution first runs "revive",
 * which loads the latest checkpoint into a new kernel and leaves a kernel
 * that kept its state alone; the next result of the agent's code says
 * what was restored (`restored`), or why an automatic checkpoint or a
 * restore failed. All of it under pool_lock, which the kernel's work
 * releases while it runs.
 */
#ifndef SUPERVISOR_SESSION_STATE_H
#define SUPERVISOR_SESSION_STATE_H

struct call;
struct config;
struct session;

/* Remember the configuration (borrowed; its checkpoint keys are read under
 * pool_lock) and start the saver thread. */
void session_state_init(const struct config *cfg);
/*
 * Call c of s has its result and ran in the kernel: note whether the kernel
 * may be new, and queue an automatic checkpoint if one is due. Returns 1
 * when the saver thread took the session's turn (it stays busy until
 * session_turn_over), else 0.
 */
int session_state_after_call(struct session *s, struct call *c);
/*
 * Hibernate idle s: the saver thread takes its turn, checkpoints it, and
 * lets its kernel and worker go, keeping its directory (session_keep_dir).
 * A checkpoint that fails leaves it live, not tried again for as long.
 * Lock held.
 */
void session_state_hibernate(struct session *s);
/*
 * The daemon stops with persist_sessions: hibernate every session that has
 * a kernel, whether idle or not yet (each after the call that runs), with
 * the checkpoint labelled "shutdown". Returns how many. Lock held.
 */
int session_state_stop(void);
/* Sessions the saver thread has still to checkpoint or is checkpointing. Lock held. */
int session_state_saving(void);
/* Before s's next execution runs in its kernel: load the last checkpoint
 * if the kernel may be new. Releases the lock while the kernel works. */
void session_state_revive(struct session *s);
/* Give the result of the agent's call c what the revive restored and why
 * an automatic checkpoint failed, once. */
void session_state_result(struct session *s, struct call *c);
/* Free what s holds of this (it is being freed). */
void session_state_free(struct session *s);

#endif
