/*
 * parent_link.h - the front's end of the protocol with the privileged
 * parent (priv_msg.h, doc/README.privsep). The front asks; the parent
 * acts, answers WORKER_STARTED or REFUSED to a spawn, and tells of workers
 * it reaped and of runtime_dir.
 *
 * Only the main loop's thread receives (parent_link_spawn and
 * parent_link_next); any thread may send the one-way requests (each is one
 * record, which a SOCK_SEQPACKET socket delivers whole). Messages that
 * arrive while a spawn waits for its answer are kept, in order, for
 * parent_link_next.
 */
#ifndef SUPERVISOR_PARENT_LINK_H
#define SUPERVISOR_PARENT_LINK_H

#include <stdint.h>
#include <sys/types.h>

#include "priv_msg.h"

/* Talk to the parent on `sock` (owned from now on). */
void parent_link_init(int sock);
/* The socket, for the main loop's poll set. */
int parent_link_fd(void);

/*
 * At start-up, before anything reads a secret file: take the parent's
 * copies (SECRET, secret_file.h) until SECRETS_SENT; what else comes is
 * kept for parent_link_next. Fatal if the parent is gone.
 */
void parent_link_secrets(void);

/*
 * Ask for a worker in network mode `mode`, in a new session directory or in
 * kept directory `dir` (0: new; see priv_msg.h), and wait for the answer. 0
 * with *st and *fd (the worker's socket; caller owns), or -1 with
 * why[why_len] (the parent's refusal, or that it is gone).
 */
int parent_link_spawn(enum net_mode mode, uint32_t dir, struct priv_worker_started *st, int *fd,
		      char *why, size_t why_len);

/* One-way requests; a failed send is logged (the parent is then gone,
 * which parent_link_next reports). */
void parent_link_end_worker(uint32_t worker);
void parent_link_claim_kernel(uint32_t worker, pid_t kernel);
void parent_link_kill_kernel(uint32_t worker, pid_t kernel);
void parent_link_remove_dir(uint32_t dir);
/* EGRESS_BIND: worker runs session (32 hex digits) of identity (its bytes
 * outside printable ASCII sent as '?', at most PRIV_REASON_MAX - 1). */
void parent_link_egress_bind(uint32_t worker, const char *session, const char *identity);

/*
 * The next message from the parent, kept ones first, without waiting.
 * 1 with *m (and *fd, caller owns, or -1); 0 when there is none now; -1
 * when the parent is gone (EOF or a read error; logged once).
 */
int parent_link_next(struct priv_msg *m, int *fd);

/*
 * Run preprocess_command on `code` through the parent (PREPROCESS), for
 * session `session` (SESSION_ID_LEN hex digits) of `identity`: the code to
 * run (caller owns), or NULL with why[why_len] (the command's stderr when
 * it failed, or that it timed out or wrote too much). Called by an HTTP
 * thread without pool_lock: it waits on a condition variable while the main
 * loop, the socket's only reader, hands it the answer (parent_link_deliver).
 */
char *parent_link_preprocess(const char *session, const char *identity, const char *code,
			     int timeout_s, long max_bytes, char *why, size_t why_len);

/*
 * Have the parent copy session directory `dir` into a new one for a fork
 * (FORK_DIR): 0 with *out (the copy, a kept directory of its own), or -1
 * with why[why_len] (the parent's refusal, which says why, or that it did
 * not answer). Called without pool_lock, as parent_link_preprocess.
 */
int parent_link_fork_dir(uint32_t dir, struct priv_dir_forked *out, char *why, size_t why_len);

/*
 * The main loop's part: if `m` answers a PREPROCESS or a FORK_DIR
 * (PREPROCESSED, DIR_FORKED, or REFUSED of one), hand it and `fd` (owned
 * from now on) to its waiting thread, or close fd if that thread gave up.
 * 1 if it did, 0 if `m` is something else.
 */
int parent_link_deliver(const struct priv_msg *m, int fd);

#endif
