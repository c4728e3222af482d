/*
 * err.h - how a function says why it failed, the one convention of the tree.
 *
 * A function that can fail returns -1 (or NULL, or false where it is a
 * predicate). When its caller needs the reason, it takes the caller's buffer
 * as its last two parameters, `char *why, size_t why_len`, and writes one
 * line there that names the object and, for a failed system call, the errno
 * text (strerror). No allocation for an error, and no static string handed
 * back through a pointer: the caller owns the buffer, which stays valid as
 * long as it likes and needs no free. A callee may pass the buffer on to
 * the function that failed below it. `why` may be NULL when the caller does
 * not want the reason.
 */
#ifndef COMMON_ERR_H
#define COMMON_ERR_H

#include <stddef.h>

/* Room for a reason naming a path or two; a longer one is cut, never overflows. */
#define ERR_LEN 1024

/* Format a reason into why[why_len] (nothing when why is NULL); returns -1. */
int err_set(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
