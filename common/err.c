/*
 * err.c - formatting a reason into the caller's buffer (see err.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

int
err_set(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || why_len == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -1;
}
