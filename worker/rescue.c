/*
 * rescue.c - the worker's line to the privileged parent (IPC_RESCUE_FD,
 * ipc.h), through which its socket to a new front comes when the front
 * died: the kernel, and with it the session's every variable, outlives
 * the front (codeexecd(8), Session lifetime).
 *
 * Until then the worker is orphaned: it reads nothing, writes nothing and
 * lets the execution in flight run to its end (its result has no one to
 * go to). The new socket replaces fd 3 whole, so that no frame half read
 * or half written by the dead front is ever taken for one of the new
 * front's. RESUMED is the first message on it, sent once the worker is
 * idle. A worker left orphaned for RESCUE_WAIT_S, or whose parent hung
 * up, ends as one whose supervisor is gone does today.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "fdpass.h"
#include "log.h"
#include "worker.h"

/* How long an orphaned worker waits for a new front before it ends. */
#define RESCUE_WAIT_S 60.0

void
rescue_init(struct wstate *w)
{
	int type = 0;
	socklen_t len = sizeof(type);

	w->rescue_fd = -1;
	/* Started without one (a test, an older parent), fd 4 is not ours. */
	if (getsockopt(IPC_RESCUE_FD, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    type != SOCK_SEQPACKET || fcntl(IPC_RESCUE_FD, F_SETFD, FD_CLOEXEC) == -1)
		return;
	w->rescue_fd = IPC_RESCUE_FD;
}

void
rescue_front_lost(struct wstate *w)
{
	supervisor_gone();
	if (w->rescue_fd == -1) {
		w->quit = 1;
		return;
	}
	if (!w->orphaned)
		log_info("the front is gone: waiting up to %g s for the next one, the kernel "
			 "running", RESCUE_WAIT_S);
	w->orphaned = clock_mono();
}

int
rescue_orphaned(const struct wstate *w)
{
	return w->orphaned > 0;
}

/* The parent's message: the socket that is fd 3 from now on. */
static void
take_socket(struct wstate *w, int fd)
{
	if (dup3(fd, IPC_WORKER_FD, O_CLOEXEC) == -1) {
		log_warn("dup3 the new front's socket onto fd %d", IPC_WORKER_FD);
		close(fd);
		w->quit = 1;
		return;
	}
	close(fd);
	ipc_reader_free(&w->rd);
	ipc_reader_init(&w->rd, IPC_WORKER_FD);
	supervisor_back();
	w->orphaned = 0;
	w->resume_due = 1;
	/* What runs now was asked for by the old front: its answer is dropped. */
	w->orphan_exec = w->ex != NULL;
	log_info("a new front took this worker over%s",
		 w->orphan_exec ? "; the execution in flight runs to its end, unanswered" : "");
	rescue_tick(w);
}

void
rescue_read(struct wstate *w)
{
	char byte;
	union fdpass_one ctl;
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ssize_t n = recvmsg(w->rescue_fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	int fd = -1;

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		fdpass_take(&mh, &fd);
	if (n <= 0 || fd == -1) {
		/* The parent is gone, or broke its own rule: nothing to wait for. */
		if (n == -1)
			log_warn("read fd %d, the parent's line", w->rescue_fd);
		else if (n > 0)
			log_warnx("the parent's line brought no socket");
		close(w->rescue_fd);
		w->rescue_fd = -1;
		if (w->orphaned)
			w->quit = 1;
		return;
	}
	take_socket(w, fd);
}

void
rescue_tick(struct wstate *w)
{
	if (!w->resume_due || w->ex || w->orphaned || lifecycle_starting(w))
		return;
	w->resume_due = 0;
	w->orphan_exec = 0;
	struct ipc_resumed r = {w->kstate == K_READY && w->k ? w->k->pid : 0, w->state_lost};
	supervisor_send(w, IPC_RESUMED, 0, &r);
}

double
rescue_timers(struct wstate *w, double now)
{
	if (!w->orphaned)
		return -1;
	double end = w->orphaned + RESCUE_WAIT_S;
	if (now < end)
		return end - now;
	log_warnx("no new front came in %g s: ending", RESCUE_WAIT_S);
	w->quit = 1;
	return 0;
}
