/* pool_state.c - see pool_state.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pool_state.h"
#include "xmalloc.h"

/* pool_lock: the workers, the session table, every call (see pool.h). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
struct pool_state pool = {.ready_cond = PTHREAD_COND_INITIALIZER};
/* Written under the lock, read without it by /health. */
static atomic_int idle_workers;
static atomic_int starting_workers;
static int wake_pipe[2] = {-1, -1};

void
pool_lock(void)
{
	pthread_mutex_lock(&lock);
}

pthread_mutex_t *
pool_mutex(void)
{
	return &lock;
}

void
pool_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

void
call_init(struct call *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	buf_init(&c->out);
	buf_init(&c->err);
	pthread_cond_init(&c->cond, NULL);
}

void
call_clear(struct call *c)
{
	json_object_put(c->result);
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	strv_free(c->allow_mime);
	free(c->input_prompt);
	buf_free(&c->out);
	buf_free(&c->err);
	pthread_cond_destroy(&c->cond);
}

void
pool_wake_init(void)
{
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe2 for the pool's wake pipe");
}

int
pool_wake_fd(void)
{
	return wake_pipe[0];
}

void
pool_wake(void)
{
	char c = 1;
	/* A full pipe already means "wake up"; nothing to do on EAGAIN. */
	if (write(wake_pipe[1], &c, 1) == -1 && errno != EAGAIN)
		log_warn("write to the pool's wake pipe");
}

void
worker_counted(struct worker *w)
{
	if (w->state == WORKER_STARTING)
		atomic_fetch_add(&starting_workers, 1);
}

void
worker_set_state(struct worker *w, enum worker_state st)
{
	if (w->state == WORKER_STARTING && st != WORKER_STARTING)
		atomic_fetch_sub(&starting_workers, 1);
	if (w->state == WORKER_IDLE && st != WORKER_IDLE)
		atomic_fetch_sub(&idle_workers, 1);
	else if (w->state != WORKER_IDLE && st == WORKER_IDLE)
		atomic_fetch_add(&idle_workers, 1);
	w->state = st;
}

int
pool_idle_count(void)
{
	return atomic_load(&idle_workers);
}

int
pool_starting_count(void)
{
	return atomic_load(&starting_workers);
}

int
pool_spare_count(void)
{
	int n = 0;
	for (struct worker *w = pool.workers; w; w = w->next)
		n += (w->state == WORKER_IDLE || w->state == WORKER_STARTING) && !w->reserved;
	return n;
}

int
pool_live_count(void)
{
	int n = 0;
	for (struct worker *w = pool.workers; w; w = w->next)
		n += w->state != WORKER_DEAD;
	return n;
}
