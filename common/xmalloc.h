/*
 * xmalloc.h - allocation that cannot fail.
 *
 * Every function aborts the process on out-of-memory or size overflow, so
 * callers keep error paths only for errors that can really happen.
 * Returned memory is owned by the caller and released with free().
 */
#ifndef COMMON_XMALLOC_H
#define COMMON_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Free each string of the NULL-terminated vector v (an argv, an envp), then v; v may be NULL. */
void strv_free(char **v);

#endif
