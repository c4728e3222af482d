/*
 * exec_stream.h - one output stream (stdout or stderr) of an execution.
 *
 * Owns what the result keeps of a stream (its first `limit` characters,
 * cut on a UTF-8 boundary), the spill file the whole stream goes to once
 * it passes the limit (spill.h), the OUTPUT chunk cut to the limit, and
 * the notes and markers that say how much was cut and where the rest is.
 * Knows nothing of the execution (execute.h) that holds two of them.
 */
#ifndef WORKER_EXEC_STREAM_H
#define WORKER_EXEC_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "ipc_msg.h"
#include "spill.h"

/*
 * Whatever output_limit says, a RESULT must stay under IPC_MAX_PAYLOAD
 * (64 MiB): past this many bytes kept, a stream also goes to its spill
 * file. Text that JSON escaping inflates past the frame limit (control
 * characters) is answered with OutputTooLarge by route.c.
 */
#define EXEC_TEXT_CAP (12u * 1024 * 1024)

/*
 * One stream of an execution. The result keeps its first `limit`
 * characters; once it grows past them, the whole stream goes to a spill
 * file as it arrives, so memory stays bounded whatever is printed.
 */
struct exec_stream {
	const char *name;	/* "stdout" or "stderr" */
	struct buf kept;	/* what the result shows */
	size_t kept_chars;
	size_t cut_chars;	/* characters seen but not kept */
	int fd;			/* spill file, -1 until the limit is passed */
	off_t written;
	char *file;		/* its path relative to the kernel's cwd */
	char *spill_error;	/* why the whole stream could not be saved */
	unsigned long long lost_bytes; /* bytes neither kept nor saved */
	/* Everything kept also went to the supervisor, first and in order
	 * (STREAMING, then OUTPUT), and it holds it: set when the request
	 * starts to stream, cleared by a clear_output (a new stream). */
	int mirrored;
};

/* An empty stream called `name` (borrowed, static), with no spill file. */
void exec_stream_init(struct exec_stream *st, const char *name);
/* Close the stream's spill file; a failure to flush it is remembered. */
void exec_stream_close(struct exec_stream *st);
/* Release a stream; its spill file is closed, not removed. */
void exec_stream_free(struct exec_stream *st);
/*
 * One chunk text[len] of the stream: keep what fits in `limit` characters,
 * and past it spill the whole stream to a file of request `id` in `place`
 * (borrowed). Bytes no file takes are counted as lost.
 */
void exec_stream_add(struct exec_stream *st, const char *text, size_t len, size_t limit,
		     const struct spill_place *place, uint32_t id);
/*
 * Fill *o, the OUTPUT for chunk `text` of stream `stream` ("stdout" or
 * "stderr"), its text capped at `limit` characters with a note saying how
 * much of the chunk was not streamed. Caller frees it with ipc_output_free().
 */
void exec_stream_chunk(const char *stream, const char *text, size_t limit, struct ipc_output *o);
/*
 * Bytes of what the stream kept that the supervisor already holds, as the
 * start of what it was streamed: the result need not send them again.
 * Streamed chunks are cut at the same limit as what is kept, so what is
 * kept is a prefix of what was streamed whenever the stream is mirrored.
 */
size_t exec_stream_streamed(const struct exec_stream *st);
/* What the stream kept so far, and a note if it was cut. Caller owns the text. */
struct ipc_text exec_stream_so_far(const struct exec_stream *st);
/*
 * Close the spill file and append to b the marker that ends a stream cut
 * at `limit` characters: how much was cut, and where the rest is.
 */
void exec_stream_marker(struct buf *b, struct exec_stream *st, size_t limit);

#endif
