/*
 * exec_rich.h - the rich outputs of an execution (execute_result and
 * display_data).
 *
 * Owns the list of {mime_type, data} a RESULT carries, filtered by the
 * allowed MIME types; an output over inline_max but within rich_limit
 * saved under outputs/rich/ (decoded) and named there by {file,
 * size_bytes, sha256} instead of its data (with binary_files, a binary
 * output kept inline is saved there too); an output over rich_limit (or
 * over what one result can carry) saved to a spill file (spill.h), images
 * decoded from base64, and replaced by a text/plain note naming the file;
 * the types it did not keep (RESULT's dropped_mime); and the last display
 * of IPC_VALUE_MIME, the result's value. Knows nothing of the execution
 * (execute.h) that holds it.
 */
#ifndef WORKER_EXEC_RICH_H
#define WORKER_EXEC_RICH_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "spill.h"

/*
 * Whatever rich_limit says, a RESULT must stay under IPC_MAX_PAYLOAD
 * (64 MiB): past this total, rich outputs also go to spill files.
 */
#define EXEC_RICH_CAP (24u * 1024 * 1024)

struct exec_rich {
	struct json_object *list;  /* array of {mime_type, data} */
	/*
	 * The last display of IPC_VALUE_MIME: not an output but the RESULT's
	 * "value", how the supervisor reads a batch item's result variable
	 * whatever its size (up to the frame limit), without parsing stdout.
	 */
	struct json_object *value; /* NULL: JSON null */
	int has_value;
	/* Types outputs had that allow_mime did not keep: strings, each
	 * once, at most IPC_DROPPED_MAX; kept across clear_output. */
	struct json_object *dropped;
	size_t bytes;		   /* what the list holds */
	/* EXECUTE's inline_limit (0: none): an output over it (within the
	 * rich limit), or over what the list may hold, is named by file. */
	size_t inline_max;
	int binary_files;	   /* EXECUTE's binary_files */
	unsigned saved;		   /* rich outputs saved to files (spilled or by file), or tried */
	unsigned spilled;	   /* ...of them, spilled (RESULT's spill_files) */
};

/* An empty list, no value, no inline_max. */
void exec_rich_init(struct exec_rich *r);
/* Release the list and the value. */
void exec_rich_free(struct exec_rich *r);
/* Forget the outputs collected so far (clear_output); the value stays. */
void exec_rich_clear(struct exec_rich *r);
/*
 * Collect the content (borrowed) of an execute_result or display_data:
 * every MIME type of `allow_mime` (NULL-terminated, borrowed; NULL: every
 * type) it has, in that order, and note in `dropped` those it has beyond
 * them; one over `limit` bytes goes to a spill file of request `id` in
 * `place` (borrowed).
 */
void exec_rich_add(struct exec_rich *r, struct json_object *content, char *const *allow_mime,
		   size_t limit, const struct spill_place *place, uint32_t id);

#endif
