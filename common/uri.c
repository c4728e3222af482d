/* uri.c - see uri.h. */
#include "autoconf.h"

#include <string.h>

#include "uri.h"

void
uri_add_path(struct buf *b, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const char *s = path; *s != '\0';) {
		size_t len = strcspn(s, "/");
		if (len > 0)
			buf_adds(b, "/");
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)s[i];
			if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~') {
				buf_add(b, &s[i], 1);
			} else {
				char e[3] = {'%', hex[c >> 4], hex[c & 15]};
				buf_add(b, e, 3);
			}
		}
		s += len + (s[len] == '/');
	}
}

char *
uri_session_file(const char *id, const char *name)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, URI_SESSION);
	buf_adds(&b, id);
	buf_adds(&b, "/outputs");
	uri_add_path(&b, name);
	return buf_release(&b);
}
