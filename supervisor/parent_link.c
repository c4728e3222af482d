/* parent_link.c - see parent_link.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "parent_link.h"
#include "xmalloc.h"

/* A message kept while a spawn waited. */
struct kept {
	struct kept *next;
	struct priv_msg m;
	int fd;
};

static int link_fd = -1;
static struct kept *kept_head, **kept_tail = &kept_head;
static uint32_t next_seq = 1;
static int gone;

void
parent_link_init(int sock)
{
	link_fd = sock;
}

int
parent_link_fd(void)
{
	return link_fd;
}

static void
send_or_log(const struct priv_msg *m)
{
	if (priv_msg_send(link_fd, m, -1) == -1)
		log_warn("send %s to the privileged parent", priv_type_name(m->type));
}

void
parent_link_end_worker(uint32_t worker)
{
	struct priv_msg m = {.type = PRIV_END_WORKER, .u.end = {worker}};
	send_or_log(&m);
}

void
parent_link_claim_kernel(uint32_t worker, pid_t kernel)
{
	struct priv_msg m = {.type = PRIV_CLAIM_KERNEL, .u.kill = {worker, (int32_t)kernel}};
	send_or_log(&m);
}

void
parent_link_kill_kernel(uint32_t worker, pid_t kernel)
{
	struct priv_msg m = {.type = PRIV_KILL_KERNEL, .u.kill = {worker, (int32_t)kernel}};
	send_or_log(&m);
}

void
parent_link_remove_dir(uint32_t dir)
{
	struct priv_msg m = {.type = PRIV_REMOVE_SESSION_DIR, .u.remove = {dir}};
	send_or_log(&m);
}

/* Read one message, waiting up to `ms` (-1: as long as it takes). 1, 0
 * (none in time), or -1 (the parent is gone; logged once). */
static int
receive(struct priv_msg *m, int *fd, int ms)
{
	char why[PRIV_ERR_LEN];
	struct pollfd p = {.fd = link_fd, .events = POLLIN};

	for (;;) {
		if (gone)
			return -1;
		int n = poll(&p, 1, ms);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0)
			return 0;
		int rc = priv_msg_recv(link_fd, m, fd, why, sizeof(why));
		if (rc == 1)
			return 1;
		if (rc == -2) {
			/* The parent is trusted; a malformed record is a bug to see. */
			log_warnx("a malformed message from the privileged parent: %s", why);
			continue;
		}
		if (rc == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (rc == -1)
			log_warn("read from the privileged parent");
		else
			log_warnx("the privileged parent is gone");
		gone = 1;
		return -1;
	}
}

static void
keep(const struct priv_msg *m, int fd)
{
	struct kept *k = xcalloc(1, sizeof(*k));
	k->m = *m;
	k->fd = fd;
	*kept_tail = k;
	kept_tail = &k->next;
}

int
parent_link_spawn(enum net_mode mode, struct priv_worker_started *st, int *fd, char *why,
		  size_t why_len)
{
	struct priv_msg m = {.type = PRIV_SPAWN_WORKER, .u.spawn = {next_seq++, mode}};
	uint32_t seq = m.u.spawn.seq;
	int got;

	if (next_seq == 0)
		next_seq = 1;
	if (priv_msg_send(link_fd, &m, -1) == -1)
		return err_set(why, why_len, "send SPAWN_WORKER to the privileged parent: %s",
			       strerror(errno));
	for (;;) {
		if (receive(&m, &got, -1) != 1)
			return err_set(why, why_len, "the privileged parent is gone");
		if (m.type == PRIV_WORKER_STARTED && m.u.started.seq == seq) {
			*st = m.u.started;
			*fd = got;
			return 0;
		}
		if (m.type == PRIV_REFUSED && m.u.refused.request == PRIV_SPAWN_WORKER &&
		    m.u.refused.ref == seq)
			return err_set(why, why_len, "the privileged parent refused: %s",
				       m.u.refused.reason);
		keep(&m, got);
	}
}

int
parent_link_next(struct priv_msg *m, int *fd)
{
	if (kept_head) {
		struct kept *k = kept_head;
		kept_head = k->next;
		if (kept_head == NULL)
			kept_tail = &kept_head;
		*m = k->m;
		*fd = k->fd;
		free(k);
		return 1;
	}
	return receive(m, fd, 0);
}
