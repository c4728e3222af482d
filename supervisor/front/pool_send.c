/* pool_send.c - see pool_send.h. */
#include "autoconf.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "ipc_msg.h"
#include "log.h"
#include "parent_link.h"
#include "pool_send.h"
#include "xmalloc.h"

void
worker_drop_queue(struct worker *w)
{
	/* Keep a small buffer for the next frame; give back a large one. */
	if (w->out.cap > 65536) {
		buf_free(&w->out);
		buf_init(&w->out);
	}
	w->out.len = 0;
	w->out_off = 0;
}

void
worker_flush(struct worker *w)
{
	while (w->fd != -1 && w->out_off < w->out.len) {
		ssize_t n = send(w->fd, w->out.data + w->out_off, w->out.len - w->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			w->out_off += (size_t)n;
			w->out_since = clock_mono();
		} else if (n == -1 && errno == EINTR) {
			continue;
		} else if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return;
		} else {
			/* Gone: its exit status, via SIGCHLD, says how. */
			log_debug("write to worker %d: %s", (int)w->pid, strerror(errno));
			worker_drop_queue(w);
		}
	}
	if (w->out_off == w->out.len)
		worker_drop_queue(w);
}

/*
 * A frame was just appended to w->out, which held `before` bytes: write
 * what the socket takes at once; the main loop writes the rest when poll()
 * says it may. Every message to a worker goes through here (encode it into
 * w->out, then call this), so that nothing ever blocks on a worker.
 */
static void
worker_queued(struct worker *w, size_t before)
{
	if (w->out_off == before)
		w->out_since = clock_mono(); /* nothing was pending: the clock starts */
	worker_flush(w);
	if (w->out_off < w->out.len)
		pool_wake(); /* poll for POLLOUT from now on */
}

/*
 * Queue message `msg` for `w` (see worker_queued): the struct of `type`
 * (ipc_msg.h, borrowed), or NULL for the types without fields. Never
 * blocks. 0, or -1 with errno set (EPIPE: the worker is gone; EMSGSIZE:
 * too large; EINVAL: a value the codec refuses).
 */
int
worker_send(struct worker *w, unsigned type, uint32_t id, const void *msg)
{
	char err[ERR_LEN] = "";
	size_t before = w->out.len;

	if (w->fd == -1) {
		errno = EPIPE;
		return -1;
	}
	int rc = msg ? ipc_msg_encode(&w->out, type, id, msg, err, sizeof(err))
		     : ipc_empty_encode(&w->out, type, id, err, sizeof(err));
	if (rc == -1) {
		w->out.len = before;
		errno = strcmp(err, "oversized payload") == 0 ? EMSGSIZE : EINVAL;
		return -1;
	}
	worker_queued(w, before);
	return 0;
}

void
worker_kill(struct worker *w, const char *why)
{
	log_warnx("worker %d: %s; killing it", (int)w->pid, why);
	if (w->cause == NULL)
		w->cause = xstrdup(why);
	parent_link_end_worker(w->priv_id);
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	worker_drop_queue(w);
}
