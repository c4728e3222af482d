/*
 * mime.h - the MIME type of a session file, from its first bytes and its
 * name: the magic numbers of PNG, JPEG, GIF and PDF first, then a small
 * table of extensions, then application/octet-stream. No libmagic: the
 * table is short, predictable, and needs nothing from the system.
 */
#ifndef COMMON_MIME_H
#define COMMON_MIME_H

#include <stddef.h>

/* Bytes of a file's start mime_guess looks at. */
#define MIME_HEAD 8

/* The type of file `name` whose first n bytes are head (n may be 0). Static string. */
const char *mime_guess(const char *name, const unsigned char *head, size_t n);
/* Whether the type is text, whose contents an MCP resource gives as text. */
int mime_is_text(const char *type);

#endif
