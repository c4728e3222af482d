/*
 * shown.h - a value as an error message shows it: in double quotes, with
 * quotes, backslashes and control bytes escaped, cut short; and the name
 * a message suggests for a misspelt one. The one copy of each: the key
 * table's walker and the tool definitions' reader both use them.
 */
#ifndef COMMON_SHOWN_H
#define COMMON_SHOWN_H

#include <stddef.h>

/* Room for what shown() writes. */
#define SHOWN_LEN 64

/* Write `s` as a message shows it into `out`; returns `out`. */
const char *shown(const char *s, char out[SHOWN_LEN]);

/* The most edits at which a name is still suggested ("did you mean"). */
#define SHOWN_NEAR 2
/* Edit distance (Levenshtein) of two names; 64 when either is 64 bytes or longer. */
size_t shown_distance(const char *a, const char *b);
/* The first of `names` (NULL-terminated) nearest to `s` within SHOWN_NEAR edits, or NULL. */
const char *shown_nearest(const char *s, const char *const *names);

#endif
