/*
 * client_watch.h - the clients whose HTTP threads wait for a call. The
 * front's main loop polls their sockets with its own, so a waiting thread
 * sleeps until something happens (progress.c) instead of waking to look
 * at its client: a hang-up (a FIN, a reset) wakes it through `wake`.
 *
 * Owns nothing but the list; the sockets are the connections'. Every
 * function runs with pool_lock held.
 */
#ifndef SUPERVISOR_CLIENT_WATCH_H
#define SUPERVISOR_CLIENT_WATCH_H

#include <poll.h>

struct client_watch {
	int fd;		 /* the client's socket (borrowed); -1: not watched */
	short events;	 /* POLLRDHUP until a FIN proved a half-close, then 0 */
	int hung_up;	 /* the main loop saw the client hang up: not polled again */
	void (*wake)(void *arg); /* wakes the thread that waits (called locked) */
	void *arg;
	struct client_watch *next;
};

/* Watch cw (borrowed until client_watch_remove) from the next turn of the
 * main loop, which is woken for it. A watch of fd -1 is not listed. */
void client_watch_add(struct client_watch *cw);
void client_watch_remove(struct client_watch *cw);
/* Watch cw again, for a reset only: its FIN was a half-close. */
void client_watch_rearm(struct client_watch *cw);
/* The main loop's part: fill up to max entries of pfd; act on them. */
int client_watch_pollfds(struct pollfd *pfd, int max);
void client_watch_handle(const struct pollfd *pfd, int n);

#endif
