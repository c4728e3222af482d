/* http_linger.c - see http_linger.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "http_linger.h"

/* Read in small pieces: this runs on an HTTP thread's small stack. */
#define LINGER_PIECE 8192

void
http_linger(int fd, int max_s, long max_bytes, struct http_linger_result *r)
{
	char piece[LINGER_PIECE];
	double start = clock_mono(), left;

	memset(r, 0, sizeof(*r));
	shutdown(fd, SHUT_WR);
	for (;;) {
		if ((left = start + max_s - clock_mono()) <= 0) {
			r->end = HTTP_LINGER_TIME;
			break;
		}
		if (r->bytes >= max_bytes) {
			r->end = HTTP_LINGER_BYTES;
			break;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n == 0 || (n == -1 && errno == EINTR))
			continue;
		size_t want = max_bytes - r->bytes < LINGER_PIECE ? (size_t)(max_bytes - r->bytes)
								  : LINGER_PIECE;
		ssize_t got = n == -1 ? -1 : recv(fd, piece, want, MSG_DONTWAIT);
		if (got > 0) {
			r->bytes += got;
		} else if (got == 0 || errno == ECONNRESET) {
			r->end = HTTP_LINGER_CLOSED;
			break;
		} else if (errno != EAGAIN && errno != EINTR) {
			r->end = HTTP_LINGER_ERROR;
			r->err = errno;
			break;
		}
	}
	r->seconds = clock_mono() - start;
}
