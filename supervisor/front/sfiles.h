/*
 * sfiles.h - a session's files under outputs/, as the supervisor reaches
 * them: through the session's worker (FILE_LIST, FILE_OPEN; FILE_WRITE
 * for an upload anywhere below its working directory), never by path.
 * The request handling may not be able to read the kernel's directory at
 * all (kernel_uid_range), and a path it opened could be swapped for a
 * link underneath; the worker opens the file safely and
 * passes the descriptor (see worker/outputs.h). Each request waits its
 * turn behind the session's executions, like an execution.
 *
 * pool_lock held for all of it (released while waiting).
 */
#ifndef SUPERVISOR_SFILES_H
#define SUPERVISOR_SFILES_H

#include <stddef.h>

#include <json-c/json.h>

struct session;

/*
 * The files of s's outputs/: {"files": [{name, size_bytes, mime_type,
 * modified_at}], "truncated"?}, sorted by name. Caller owns. NULL with
 * why when the worker could not answer. A session that never ran code
 * has no files yet.
 */
struct json_object *sfiles_list(struct session *s, char *why, size_t why_len);

/* Why sfiles_open failed. */
enum sfiles_err {
	SFILES_REFUSED, /* missing, or not a file the session may hand out */
	SFILES_FAILED,	/* the worker could not answer */
};

/*
 * Open file `path` of s's outputs/ for reading. Returns the descriptor
 * (caller closes) with *info set to {name, size_bytes, mime_type,
 * modified_at} (caller owns), or -1 with *err and why (naming the path).
 */
int sfiles_open(struct session *s, const char *path, struct json_object **info,
		enum sfiles_err *err, char *why, size_t why_len);

struct ipc_file_write;
/*
 * Write file wr->path below s's working directory with wr->data (borrowed)
 * through the worker (ipc_msg.h's FILE_WRITE). 0 with *info set to {name,
 * size_bytes, mime_type, modified_at} (caller owns), or -1 with *err and
 * why (naming the path).
 */
int sfiles_write(struct session *s, const struct ipc_file_write *wr, struct json_object **info,
		 enum sfiles_err *err, char *why, size_t why_len);

#endif
