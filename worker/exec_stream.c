/* exec_stream.c - see exec_stream.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_stream.h"
#include "xmalloc.h"

void
exec_stream_init(struct exec_stream *st, const char *name)
{
	memset(st, 0, sizeof(*st));
	st->name = name;
	st->fd = -1;
	buf_init(&st->kept);
}

void
exec_stream_close(struct exec_stream *st)
{
	if (st->fd != -1 && close(st->fd) == -1 && st->spill_error == NULL)
		st->spill_error = xasprintf("close %s: %s", st->file, strerror(errno));
	st->fd = -1;
}

void
exec_stream_free(struct exec_stream *st)
{
	exec_stream_close(st);
	buf_free(&st->kept);
	free(st->file);
	free(st->spill_error);
}

/* Characters (UTF-8 sequences) in s[len]. */
static size_t
utf8_chars(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

/*
 * Bytes of s[len] that hold at most `chars` characters and at most `bytes`
 * bytes, ending on a character boundary.
 */
static size_t
utf8_prefix(const char *s, size_t len, size_t chars, size_t bytes)
{
	size_t i = 0, n = 0;

	if (bytes < len)
		len = bytes;
	for (; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == chars)
			break;
	}
	while (i > 0 && i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	return i;
}

/*
 * Append text to the stream's spill file; on failure, remember why and stop.
 * Bytes that no file takes are counted as lost.
 */
static void
stream_spill(struct exec_stream *st, const struct spill_place *place, const char *text,
	     size_t len)
{
	if (st->fd == -1) {
		if (st->spill_error)
			st->lost_bytes += len;
		return;
	}
	off_t before = st->written;
	int rc = spill_write(place, st->fd, &st->written, text, len);
	if (rc == 0)
		return;
	st->lost_bytes += len - (size_t)(st->written - before);
	if (rc == 1)
		st->spill_error = xasprintf("%s was cut at %lld bytes by the file size limit",
					    st->file, (long long)place->max_bytes);
	else
		st->spill_error = xasprintf("write %s: %s", st->file, strerror(errno));
	exec_stream_close(st);
}

/* The stream passes its limit: start its spill file with what it kept. */
static void
stream_overflow(struct exec_stream *st, const struct spill_place *place, uint32_t id)
{
	char why[ERR_LEN];

	st->fd = spill_create(place, &spill_output_dir, id, st->name, ".txt", &st->file, why,
			      sizeof(why));
	if (st->fd == -1) {
		st->spill_error = xstrdup(why);
		st->lost_bytes += st->kept.len; /* the file misses its start too */
		return;
	}
	stream_spill(st, place, st->kept.data ? st->kept.data : "", st->kept.len);
}

void
exec_stream_add(struct exec_stream *st, const char *text, size_t len, size_t limit,
		const struct spill_place *place, uint32_t id)
{
	size_t chars = utf8_chars(text, len);

	if (st->cut_chars == 0 && st->kept_chars + chars <= limit &&
	    st->kept.len + len <= EXEC_TEXT_CAP) {
		buf_add(&st->kept, text, len);
		st->kept_chars += chars;
		return;
	}
	if (st->cut_chars == 0 && st->fd == -1 && st->spill_error == NULL)
		stream_overflow(st, place, id);
	stream_spill(st, place, text, len);
	size_t room = limit - st->kept_chars;
	size_t n = st->cut_chars ? 0 : utf8_prefix(text, len, room, EXEC_TEXT_CAP - st->kept.len);
	size_t kept = utf8_chars(text, n);
	buf_add(&st->kept, text, n);
	st->kept_chars += kept;
	st->cut_chars += chars - kept;
}

void
exec_stream_chunk(const char *stream, const char *text, size_t limit, struct ipc_output *o)
{
	size_t len = strlen(text);
	size_t n = utf8_prefix(text, len, limit, EXEC_TEXT_CAP);

	memset(o, 0, sizeof(*o));
	o->name = strcmp(stream, "stderr") == 0 ? IPC_STDERR : IPC_STDOUT;
	if (n == len)
		o->text.s = xstrdup(text);
	else
		o->text.s = xasprintf("%.*s\n[codeexecd] %zu more characters of this chunk are not streamed; the result says where the whole output is\n",
				      (int)n, text, utf8_chars(text + n, len - n));
	o->text.len = strlen(o->text.s);
}

size_t
exec_stream_streamed(const struct exec_stream *st)
{
	return st->mirrored ? st->kept.len : 0;
}

struct ipc_text
exec_stream_so_far(const struct exec_stream *st)
{
	struct buf b;
	struct ipc_text t;

	buf_init(&b);
	buf_add(&b, st->kept.data ? st->kept.data : "", st->kept.len);
	if (st->cut_chars)
		buf_printf(&b, "\n[codeexecd] %zu more characters of %s are not streamed; the result says where the whole output is\n",
			   st->cut_chars, st->name);
	t.len = b.len;
	t.s = buf_release(&b);
	return t;
}

void
exec_stream_marker(struct buf *b, struct exec_stream *st, size_t limit)
{
	exec_stream_close(st);
	if (st->cut_chars == 0)
		return;
	buf_printf(b, "\n[codeexecd] %s truncated at %zu characters: %zu more characters were cut; ",
		   st->name, limit, st->cut_chars);
	if (st->spill_error == NULL)
		buf_printf(b, "the whole %s is in %s\n", st->name, st->file);
	else if (st->file)
		buf_printf(b, "the whole %s should be in %s, but %s\n", st->name, st->file,
			   st->spill_error);
	else
		buf_printf(b, "the whole %s could not be saved: %s\n", st->name, st->spill_error);
}
