/*
 * supervisor_link.c - the worker's side of its socket to the supervisor
 * (fd 3, ipc.h): the log sink that turns each line into IPC_LOG, and the
 * sends lifecycle.c and route.c make (worker.h). Once the supervisor is
 * gone nothing more is written to it: log lines go to stderr instead,
 * until a new front's socket comes (rescue.c).
 * Reading and routing frames is main.c's loop.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "buf.h"
#include "ipc.h"
#include "ipc_msg.h"
#include "log.h"
#include "worker.h"

/* Where log lines go; -1 once the supervisor is gone. */
static int log_fd = IPC_WORKER_FD;

/* The log sink: each line becomes IPC_LOG; stderr if that cannot work. */
static void
log_to_supervisor(int priority, const char *line)
{
	static int busy;

	if (busy || log_fd == -1) {
		fprintf(stderr, "codeexec-worker[%d]: %s\n", (int)getpid(), line);
		return;
	}
	busy = 1; /* a failed send must not log through us again */
	struct ipc_log l = {priority, ipc_text_of(line)};
	if (ipc_log_send(log_fd, 0, &l) == -1)
		fprintf(stderr, "codeexec-worker[%d]: %s\n", (int)getpid(), line);
	busy = 0;
}

void
supervisor_log_start(void)
{
	log_set_sink(log_to_supervisor);
}

void
supervisor_gone(void)
{
	log_fd = -1;
}

void
supervisor_back(void)
{
	log_fd = IPC_WORKER_FD;
}

/* A frame of the execution the old front asked for, which no one awaits. */
static int
orphans(const struct wstate *w, unsigned type, uint32_t id)
{
	return w->orphan_exec && w->ex && id == w->ex->id && type != IPC_LOG;
}

int
supervisor_send(struct wstate *w, unsigned type, uint32_t id, const void *msg)
{
	if (log_fd == -1 || orphans(w, type, id))
		return 0;
	if (ipc_msg_send(IPC_WORKER_FD, type, id, msg) == 0)
		return 0;
	if (errno == EMSGSIZE || errno == EINVAL) {
		int saved = errno;
		log_warnx("dropped %s %s frame", saved == EMSGSIZE ? "an oversized" : "an invalid",
			  ipc_type_name(type));
		errno = saved;
		return -1;
	}
	log_fd = -1; /* stop talking to it, logging included */
	log_warn("send %s to the supervisor", ipc_type_name(type));
	rescue_front_lost(w);
	return 0;
}

int
supervisor_send_fd(struct wstate *w, unsigned type, uint32_t id, const void *msg, int fd)
{
	struct buf b;
	char err[IPC_ERR_LEN] = "";

	if (log_fd == -1 || orphans(w, type, id))
		return 0;
	buf_init(&b);
	if (ipc_msg_encode(&b, type, id, msg, err, sizeof(err)) == -1) {
		log_warnx("dropped an invalid %s frame: %s", ipc_type_name(type), err);
		buf_free(&b);
		errno = EINVAL;
		return -1;
	}
	int rc = ipc_write_fd(IPC_WORKER_FD, b.data, b.len, fd);
	buf_free(&b);
	if (rc == -1) {
		log_fd = -1;
		log_warn("send %s to the supervisor", ipc_type_name(type));
		rescue_front_lost(w);
	}
	return 0;
}

void
worker_protocol_error(struct wstate *w, const char *what)
{
	log_warnx("protocol error from the supervisor: %s", what);
	w->quit = 1;
	w->graceful = 0;
	w->exit_code = 1;
}
