/*
 * dirs_left.h - the session directories an earlier instance or front left
 * in state_dir/sessions, found for persist_sessions (session_journal.h on
 * the front's side).
 *
 * Only what the parent itself could have made is taken: an entry named by
 * PRIV_NAME_LEN lowercase hex digits, a directory (never a link), owned by
 * the daemon's user or, under kernel_uid_range, by a uid of the range.
 * Anything else there is removed, as a stale leftover. The parent reads
 * nothing inside the directories: which session a directory belongs to is
 * the front's journal's to say.
 */
#ifndef SUPERVISOR_DIRS_LEFT_H
#define SUPERVISOR_DIRS_LEFT_H

#include <sys/types.h>

#include "priv_msg.h"

struct config;

/*
 * Call `fn` with each session directory left (its path and name, borrowed,
 * and the kernel identity it belongs to: 0 for the daemon's own, whose
 * directories have uid `own`, the user it runs as once it dropped
 * privileges). Returns how many were found.
 */
int dirs_left_each(const struct config *cfg, uid_t own,
		   void (*fn)(const char *dir, const char name[PRIV_NAME_LEN + 1], uid_t uid,
			      void *arg),
		   void *arg);

#endif
