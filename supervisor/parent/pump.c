/* pump.c - see pump.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pump.h"

void
pump_reset(struct pump *p)
{
	p->len = p->off = 0;
	p->eof = 0;
	p->moved = 0;
}

int
pump_move(struct pump *p, int from, int to)
{
	if (p->len == 0 && !p->eof) {
		ssize_t n = read(from, p->buf, sizeof(p->buf));
		if (n == 0)
			p->eof = 1;
		else if (n > 0)
			p->len = (size_t)n, p->off = 0;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
	while (p->off < p->len) {
		ssize_t n = send(to, p->buf + p->off, p->len - p->off, MSG_NOSIGNAL);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n == -1)
			return -1;
		p->off += (size_t)n;
		p->moved += (unsigned long long)n;
	}
	p->len = p->off = 0;
	if (p->eof == 1) {
		shutdown(to, SHUT_WR);
		p->eof = 2;
	}
	return 0;
}

short
pump_wants_in(const struct pump *p)
{
	return p->len == 0 && !p->eof ? POLLIN : 0;
}

short
pump_wants_out(const struct pump *p)
{
	return p->len > p->off ? POLLOUT : 0;
}
