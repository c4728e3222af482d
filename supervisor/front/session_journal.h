/*
 * session_journal.h - the sessions that outlive a restart of the daemon or
 * of its front (persist_sessions): state_dir/journal/sessions.json.
 *
 * The front writes the journal (mode 0600, replaced whole by a rename)
 * each second its content changed and, synced, at the stop: every session's id,
 * identity, times, revision path, how many checkpoints it has, and the
 * name of its session directory, where its kernel wrote them. The parent
 * keeps the session directories it finds at start (dirs_left.h) and names
 * each to the new front (DIR_LEFT); the front gives each the session its
 * journal names it for, hibernated: its next call starts a kernel there,
 * which loads its latest checkpoint. A directory the journal does not name
 * is removed; a journal entry whose directory did not come is forgotten.
 * After a crash of the front alone, a session whose worker still runs gets
 * it back instead (WORKER_LEFT), its kernel and variables as they were.
 * So a session's checkpoint is only ever loaded by a kernel of the session,
 * and so of the identity, whose kernel wrote it, as long as no kernel can
 * write the journal (one of the daemon's uid that reaches state_dir can:
 * codeexecd.yaml(5), persist_sessions).
 *
 * Kept jobs (job.h) are in the journal too, and the result of each that
 * ended in a file of its own (state_dir/journal/jobs/ID.json, written once,
 * before the journal names it ended); at load an ended job is back with
 * its result, one that still ran as failed with error Aborted. Files of
 * jobs no longer kept are removed at the next write.
 *
 * Functions that take no lock run with pool_lock held.
 */
#ifndef SUPERVISOR_SESSION_JOURNAL_H
#define SUPERVISOR_SESSION_JOURNAL_H

#include "priv_msg.h"

struct config;
struct worker;

/* Read the journal: its sessions that never had a directory are back at
 * once, the others wait for theirs. Without persist_sessions, remove it
 * and the jobs' files instead, so that no later start brings them back. */
void session_journal_load(const struct config *cfg);
/* The parent kept directory `d`: the journal's session for it is back,
 * hibernated, or the directory is removed. */
void session_journal_dir_left(const struct priv_dir_left *d);
/* The front before this one died and its worker `w` (WORKER_LEFT `l`,
 * taken over) still runs: the journal's session for it is back, with its
 * kernel and every variable (session_take_over); a worker no entry names
 * is released. */
void session_journal_worker_left(const struct priv_worker_left *l, struct worker *w);
/* Its worker `w` is RESUMED, or died first: the session's calls go on
 * (pool_on_worker_left). */
void session_journal_resumed(struct worker *w);
/* Every DIR_LEFT has come: forget the entries no directory came for. */
void session_journal_settle(void);
/*
 * Write the journal if it changed since the last write. Takes pool_lock
 * itself, for a snapshot; writes without it. `sync`: fsync before the
 * rename (the stop's); the main loop's writes each second do not, since a
 * slow disk would hold every worker's I/O meanwhile.
 */
void session_journal_write(int sync);

#endif
