/* shown.c - see shown.h. */
#include "autoconf.h"

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
