/*
 * monitor_handover.c - a new front takes over the workers of the front
 * that died (monitor.h, persist_sessions): each live worker gets a fresh
 * socket through the parent's line to it (IPC_RESCUE_FD), and the new
 * front the other end with WORKER_LEFT; each kept directory is named
 * again with DIR_LEFT. A fresh socket, never the old one's other end: the
 * dead front may have left a frame half read or half written on it.
 */
#include "autoconf.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"
#include "ipc.h"
#include "log.h"
#include "monitor_int.h"

void
monitor_keep_workers(struct monitor *m)
{
	m->broken = 1; /* nothing more to the dead front */
	/* Their answers were the old front's: each is stopped, and unanswered. */
	for (struct mpre *p = m->pres; p; p = p->next) {
		p->stale = 1;
		m->ops->kill_group(m->ctx, p->pid);
	}
	for (struct mfork *c = m->forks; c; c = c->next) {
		c->stale = 1;
		m->ops->kill_group(m->ctx, c->job.pid);
	}
}

/* The last component of a session directory's path, its name. */
static const char *
name_of(const struct mworker *w)
{
	const char *slash = strrchr(w->dir, '/');
	return slash && strlen(slash + 1) == PRIV_NAME_LEN ? slash + 1 : NULL;
}

/* Give live worker `w` a new socket; ours is its other end, or -1 (logged). */
static int
new_socket(struct mworker *w)
{
	int sv[2];
	char byte = 'F';
	union fdpass_one ctl;
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair for worker %d", (int)w->pid);
		return -1;
	}
	fdpass_attach(&mh, &ctl, sv[1]);
	ssize_t n = sendmsg(w->rescue, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	int saved = errno;
	close(sv[1]);
	if (n != 1) {
		errno = saved;
		log_warn("hand worker %d its new socket", (int)w->pid);
		close(sv[0]);
		return -1;
	}
	return sv[0];
}

/* Hand live worker `w` to the front (1), or end it (0); -1 if the front is gone. */
static int
hand_over(struct monitor *m, struct mworker *w)
{
	const char *name = w->dir ? name_of(w) : NULL;
	int fd = -1;

	/* A worker whose session was closed, or that cannot take a socket, ends. */
	if (w->rescue == -1 || w->remove_at_exit || name == NULL ||
	    (fd = new_socket(w)) == -1) {
		m->ops->kill_worker(m->ctx, w->pid);
		return 0;
	}
	struct priv_msg r = {.type = PRIV_WORKER_LEFT};
	r.u.wleft = (struct priv_worker_left){w->id,	     w->dir_id, (int32_t)w->pid,
					      (uint32_t)w->uid, (uint32_t)w->kernel, {0}};
	memcpy(r.u.wleft.name, name, PRIV_NAME_LEN + 1);
	int rc = monitor_send(m, &r, fd);
	close(fd);
	return rc == -1 ? -1 : 1;
}

int
monitor_hand_over(struct monitor *m, int front)
{
	int n = 0;

	m->front = front;
	m->broken = 0;
	for (struct mworker *w = m->workers; w && !m->broken; w = w->next) {
		if (w->live) {
			int handed = hand_over(m, w);
			if (handed == -1)
				return -1;
			n += handed;
		} else if (w->dir && name_of(w) && monitor_tell_dir_left(m, w, name_of(w)) == -1) {
			return -1;
		}
	}
	return m->broken ? -1 : n;
}
