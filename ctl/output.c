/* output.c - reading the daemon's JSON leniently and printing it for people. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "xmalloc.h"

/*
 * The readers below tolerate a missing or mistyped member, because a
 * newer or older daemon may add or drop fields; the table shows a fallback
 * rather than failing the whole command.
 */
const char *
ctl_str(struct json_object *o, const char *key, const char *fallback)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return fallback;
	if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
		return fallback;
	return json_object_get_string(v);
}

long long
ctl_int(struct json_object *o, const char *key, long long fallback)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)))
		return fallback;
	return (long long)json_object_get_int64(v);
}

int
ctl_bool(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

void
ctl_duration(long long s, char *out, size_t outlen)
{
	if (s < 0)
		s = 0;
	if (s >= 86400)
		snprintf(out, outlen, "%lldd %02lldh", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(out, outlen, "%lldh %02lldm", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(out, outlen, "%lldm %02llds", s / 60, s % 60);
	else
		snprintf(out, outlen, "%llds", s);
}

void
table_init(struct table *t, size_t ncols)
{
	t->ncols = ncols;
	t->ncells = 0;
	t->cells = NULL;
}

void
table_addf(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *cell;

	va_start(ap, fmt);
	if (vasprintf(&cell, fmt, ap) == -1)
		cell = NULL;
	va_end(ap);
	if (cell == NULL)
		cell = xstrdup("?");
	t->cells = xreallocarray(t->cells, t->ncells + 1, sizeof(*t->cells));
	t->cells[t->ncells++] = cell;
}

void
table_print(const struct table *t, FILE *f)
{
	size_t *width = xcalloc(t->ncols, sizeof(*width));

	for (size_t i = 0; i < t->ncells; i++) {
		size_t n = strlen(t->cells[i]);
		if (n > width[i % t->ncols])
			width[i % t->ncols] = n;
	}
	for (size_t i = 0; i < t->ncells; i++) {
		size_t col = i % t->ncols;
		int last = col == t->ncols - 1 || i == t->ncells - 1;
		if (last)
			fprintf(f, "%s\n", t->cells[i]);
		else
			fprintf(f, "%-*s  ", (int)width[col], t->cells[i]);
	}
	free(width);
}

void
table_free(struct table *t)
{
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->ncells = 0;
}
