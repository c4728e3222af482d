/*
 * buf.h - a growable byte buffer.
 *
 * A struct buf owns its `data`; buf_free() releases it. The data is always
 * NUL-terminated one byte past `len`, so text can be used as a C string.
 */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_adds(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drop the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/*
 * If the buffer is empty and its storage has grown past `keep` bytes, free
 * the storage: one large message must not stay allocated for good.
 */
void buf_shrink(struct buf *b, size_t keep);
/* Hand the data to the caller (who frees it) and reset the buffer. */
char *buf_release(struct buf *b);

#endif
