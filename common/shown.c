/* shown.c - see shown.h. */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "shown.h"

const char *
shown(const char *s, char out[SHOWN_LEN])
{
	size_t o = 0;

	out[o++] = '"';
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (o + 8 >= SHOWN_LEN) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)snprintf(out + o, SHOWN_LEN - o, "\\x%02x", ch);
		else if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(out + o, SHOWN_LEN - o, "\\%c", ch);
		else
			out[o++] = (char)ch;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

size_t
shown_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *
shown_nearest(const char *s, const char *const *names)
{
	const char *best = NULL;
	size_t bestd = SHOWN_NEAR + 1;

	for (size_t k = 0; names[k] != NULL; k++) {
		size_t d = shown_distance(s, names[k]);
		if (d < bestd) {
			best = names[k];
			bestd = d;
		}
	}
	return best;
}
