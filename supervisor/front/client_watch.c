/* client_watch.c - see client_watch.h. */
#include "autoconf.h"

#include <stddef.h>

#include "client_watch.h"
#include "pool_state.h"

static struct client_watch *watched;

void
client_watch_add(struct client_watch *cw)
{
	if (cw->fd < 0)
		return;
	cw->events = POLLRDHUP;
	cw->hung_up = 0;
	cw->next = watched;
	watched = cw;
	pool_wake(); /* the main loop polls it from its next turn */
}

void
client_watch_remove(struct client_watch *cw)
{
	for (struct client_watch **p = &watched; *p; p = &(*p)->next) {
		if (*p == cw) {
			*p = cw->next;
			break;
		}
	}
}

void
client_watch_rearm(struct client_watch *cw)
{
	cw->events = 0; /* POLLHUP and POLLERR come whatever is asked */
	cw->hung_up = 0;
	pool_wake();
}

int
client_watch_pollfds(struct pollfd *pfd, int max)
{
	int n = 0;

	for (struct client_watch *cw = watched; cw && n < max; cw = cw->next) {
		if (cw->hung_up)
			continue;
		pfd[n++] = (struct pollfd){.fd = cw->fd, .events = cw->events};
	}
	return n;
}

void
client_watch_handle(const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		/* The list may have changed since the poll: match by socket. */
		for (struct client_watch *cw = watched; cw; cw = cw->next) {
			if (cw->fd == pfd[i].fd && !cw->hung_up) {
				cw->hung_up = 1;
				cw->wake(cw->arg);
			}
		}
	}
}
