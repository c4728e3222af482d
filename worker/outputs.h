/*
 * outputs.h - the session's outputs/ directory, seen from the worker, and
 * the files a client uploads below the working directory.
 *
 * The worker alone touches the files of a kernel's working directory: the
 * supervisor's request handling cannot read it (another uid, 0700), and a
 * path it handled could change underneath anyway. So the worker makes
 * outputs/, lists it, and opens one of its files for the supervisor,
 * passing the descriptor; it also writes the files a client uploads.
 * Every step goes through a descriptor opened
 * relative to its parent with O_NOFOLLOW: a link planted by the kernel is
 * never followed, "." and ".." are refused, and only regular files are
 * listed or opened (the type is checked with fstat on the open descriptor).
 */
#ifndef WORKER_OUTPUTS_H
#define WORKER_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "ipc_msg.h"
#include "spill.h"

#define OUTPUTS_DIR "outputs"
/* Directories below outputs/ that are looked into. */
#define OUTPUTS_DEPTH 8
/* Entries of any kind looked at in one walk; past it the listing is cut. */
#define OUTPUTS_VISIT_MAX 20000

/* outputs/ as it was: each file's name, size and modification time. */
struct outputs_snap {
	struct outputs_entry {
		char *name;
		uint64_t size;
		int64_t mtime_ns;
	} *e;
	size_t n;
	int taken;
};

/* Make outputs/ under place->cwd, owned by the kernel's identity. 0, or -1 with why. */
int outputs_make(const struct spill_place *place, char *why, size_t why_len);
/*
 * The regular files under outputs/ into *out (emptied first; the caller
 * frees it with ipc_files_free). A missing outputs/ is an empty list.
 */
void outputs_list(const struct spill_place *place, struct ipc_files *out);
/* Remember what outputs/ holds now (replacing *s). */
void outputs_snap_take(const struct spill_place *place, struct outputs_snap *s);
void outputs_snap_free(struct outputs_snap *s);
/*
 * The files created or changed since snapshot `s` into r->artifacts (and
 * r->artifacts_truncated). Nothing when `s` was not taken.
 */
void outputs_changed(const struct spill_place *place, const struct outputs_snap *s,
		     struct ipc_result *r);
/*
 * Open outputs/`path` for reading, refusing what outputs.h says, and fill
 * *a (caller frees its strings with the message). Returns the descriptor
 * (close-on-exec), or -1 with why[why_len] naming the path and the reason.
 */
int outputs_open(const struct spill_place *place, const char *path, struct ipc_artifact *a,
		 char *why, size_t why_len);

/*
 * Write data[len] to `path` below place->cwd (not only outputs/), walking
 * its directories as outputs_open does: into a new file of the kernel's
 * identity and `mode` (masked to 0755) in the same directory, synced,
 * then renamed over the name. A name that is a link, not a regular file,
 * or another identity's file is refused; the file size limit holds.
 * Fills *a (caller frees its strings). 0, or -1 with why[why_len] naming
 * the path and the reason.
 */
int outputs_write(const struct spill_place *place, const char *path, const void *data, size_t len,
		  unsigned mode, struct ipc_artifact *a, char *why, size_t why_len);

#endif
