/* remover.c - see remover.h. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "fsutil.h"
#include "log.h"
#include "remover.h"
#include "xmalloc.h"

struct removal {
	struct removal *next;
	char *path; /* owned */
};

/*
 * Guards the queue, `busy` and `started`. A leaf lock: taken by the
 * parent's loop (reaped workers, the front's REMOVE_SESSION_DIR), never
 * held while a tree is removed.
 */
static pthread_mutex_t remover_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t remover_cond = PTHREAD_COND_INITIALIZER; /* queue or busy changed */
static struct removal *head, *tail;
static int busy;    /* the thread is removing one tree now */
static int started; /* the thread exists */

static void *
remover_thread(void *unused)
{
	pthread_mutex_lock(&remover_lock);
	for (;;) {
		while (head == NULL)
			pthread_cond_wait(&remover_cond, &remover_lock);
		struct removal *r = head;
		head = r->next;
		if (head == NULL)
			tail = NULL;
		busy = 1;
		pthread_mutex_unlock(&remover_lock);
		if (fs_remove_tree(r->path) == -1)
			log_warn("remove %s", r->path);
		free(r->path);
		free(r);
		pthread_mutex_lock(&remover_lock);
		busy = 0;
		pthread_cond_broadcast(&remover_cond);
	}
	return NULL;
}

void
remover_add(char *path)
{
	struct removal *r = xcalloc(1, sizeof(*r));
	pthread_t tid;

	r->path = path;
	pthread_mutex_lock(&remover_lock);
	if (!started) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&tid, &attr, remover_thread, NULL);
		pthread_attr_destroy(&attr);
		if (rc != 0) {
			errno = rc;
			fatal("pthread_create for the directory remover");
		}
		started = 1;
	}
	if (tail)
		tail->next = r;
	else
		head = r;
	tail = r;
	pthread_cond_broadcast(&remover_cond);
	pthread_mutex_unlock(&remover_lock);
}

void
remover_drain(void)
{
	pthread_mutex_lock(&remover_lock);
	while (head != NULL || busy)
		pthread_cond_wait(&remover_cond, &remover_lock);
	pthread_mutex_unlock(&remover_lock);
}
