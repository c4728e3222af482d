/*
 * shown.h - a value as an error message shows it: in double quotes, with
 * quotes, backslashes and control bytes escaped, cut short.
 */
#ifndef COMMON_SHOWN_H
#define COMMON_SHOWN_H

/* Room for what shown() writes. */
#define SHOWN_LEN 64

/* Write `s` as a message shows it into `out`; returns `out`. */
const char *shown(const char *s, char out[SHOWN_LEN]);

#endif
