/*
 * pump.h - one direction of a relayed byte stream between two
 * non-blocking sockets, as the sidecar relay (relay.h) and the egress
 * proxy (egress_proxy.h) copy them: what was read from one end and is not
 * yet written to the other, and the end of input passed on as SHUT_WR.
 */
#ifndef SUPERVISOR_PUMP_H
#define SUPERVISOR_PUMP_H

#include <stddef.h>

#define PUMP_BUF_LEN 16384

struct pump {
	char buf[PUMP_BUF_LEN];
	size_t len, off;
	int eof;	     /* 1: `from` said EOF; 2: `to` got SHUT_WR once the buffer was out */
	unsigned long long moved; /* bytes written to `to` so far */
};

/* Empty p (a new connection). */
void pump_reset(struct pump *p);
/* Move what can be moved from `from` through p to `to`; -1 when the stream failed. */
int pump_move(struct pump *p, int from, int to);
/* The poll events p wants: POLLIN on `from` while its buffer is empty; POLLOUT on `to`. */
short pump_wants_in(const struct pump *p);
short pump_wants_out(const struct pump *p);

#endif
