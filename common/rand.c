/* rand.c - see rand.h. */
#include "autoconf.h"

#include <errno.h>
#include <sys/random.h>

#include "hex.h"
#include "log.h"
#include "rand.h"

void
rand_bytes(void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n > 0) {
		ssize_t got = getrandom(p, n, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			fatal("getrandom");
		}
		p += got;
		n -= (size_t)got;
	}
}

void
rand_hex(char *out, size_t nbytes)
{
	unsigned char raw[64];

	if (nbytes > sizeof(raw))
		fatalx("rand_hex: %zu bytes is too many", nbytes);
	rand_bytes(raw, nbytes);
	hex_encode(out, raw, nbytes);
}
