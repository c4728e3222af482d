/*
 * checkpoint_cell.h - the Python cell that saves a kernel's namespace with
 * dill into its session directory, or loads it back, and the reading of
 * what it printed. The tools (tool_checkpoint.c) and the automatic
 * checkpoints and restores (session_state.c) run it as a silent execution,
 * so nothing shows in In, Out, _, the history or the execution count.
 *
 * A checkpoint is two files of CHECKPOINT_DIR in the working directory,
 * written by the kernel under its own uid with mode 0600: ID.pkl, then
 * ID.json (what it holds), each renamed into place only when whole, so a
 * failure (a limit, a full disk) leaves the earlier checkpoints as they
 * were. Ids sort by the time they were taken.
 */
#ifndef SUPERVISOR_CHECKPOINT_CELL_H
#define SUPERVISOR_CHECKPOINT_CELL_H

#include <json-c/json.h>

struct config;

#define CHECKPOINT_DIR ".codeexecd-checkpoints"

/* Seconds a cell's execution gets beyond checkpoint.max_seconds, which the
 * cell enforces itself: enough to start Python's pickler and answer. */
#define CHECKPOINT_CELL_SLACK_S 30

/*
 * The cell for `op` in the working directory `workdir`: "save" (arg: a
 * label or NULL), "load" (arg: an id, or NULL for the latest), "revive"
 * (the latest, but only into a kernel that has not saved or loaded one
 * itself: a new kernel) or "autosave" (a save, but none by a new kernel
 * that loaded nothing while the session has a checkpoint). Bounded by checkpoint.max_bytes and
 * checkpoint.max_seconds. Caller owns.
 */
char *checkpoint_cell(const struct config *cfg, const char *workdir, const char *op,
		      const char *arg);
/*
 * What the cell for `op` printed, from its execution's `result` (borrowed),
 * if the execution succeeded and the text has the cell's shape:
 * {"kept": true} (revive and autosave: nothing done);
 * {"error": {type, message}}; or {checkpoint, taken_at, names, skipped:
 * [{name, reason}], ...}. NULL otherwise. Caller owns.
 */
struct json_object *checkpoint_answer(struct json_object *result, const char *op);


#endif
