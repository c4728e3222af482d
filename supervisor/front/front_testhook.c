/* front_testhook.c - see front_testhook.h. */
#include "autoconf.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "front_testhook.h"
#include "log.h"
#include "parent_link.h"
#include "pool_state.h"

/* Send `len` raw bytes as one record, with descriptor `fd` unless -1. */
static void
send_raw(const unsigned char *rec, size_t len, int fd)
{
	if (priv_record_send(parent_link_fd(), rec, len, fd) == -1)
		log_warn("test hook: send a record to the parent");
}

/* The requests of a subverted front; each must be refused and logged. */
static void
lie(void)
{
	uint32_t live = 0, dir = 0;
	pid_t parent = getppid();

	pool_lock();
	for (struct worker *w = pool.workers; w; w = w->next)
		if (w->state != WORKER_DEAD) {
			live = w->priv_id;
			dir = w->dir_id;
		}
	enum net_mode other = pool.cfg->kernel_network_mode == NET_INHERIT ? NET_ISOLATED
									  : NET_INHERIT;
	pool_unlock();
	log_warnx("test hook: the front lies to the parent (CODEEXECD_TEST_FRONT_FILTER)");
	parent_link_end_worker(999999);		   /* never issued */
	parent_link_kill_kernel(999999, parent);   /* never issued, and the parent's pid */
	parent_link_remove_dir(999999);		   /* never made */
	if (live) {
		parent_link_kill_kernel(live, parent); /* not the kernel claimed */
		parent_link_remove_dir(dir);	       /* its worker still runs */
	}
	struct priv_msg m = {.type = PRIV_SPAWN_WORKER, .u.spawn = {424242, other}};
	if (priv_msg_send(parent_link_fd(), &m, -1) == -1)
		log_warn("test hook: send SPAWN_WORKER");
	/* KILL_KERNEL of pid 1 and of every process (-1), which no encoder makes */
	const unsigned char init[] = {0, PRIV_VERSION, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1};
	const unsigned char all[] = {0, PRIV_VERSION, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};
	const unsigned char v1[] = {0, 1, 0, 2, 0, 0, 0, 1};
	const unsigned char exited[] = {0, PRIV_VERSION, 0, 33, 0, 0, 0, 1, 0, 0, 0, 9};
	const unsigned char end[] = {0, PRIV_VERSION, 0, 2, 0, 0, 0, 1};
	const unsigned char garbage[] = "uid=0 path=/etc/shadow";
	send_raw(init, sizeof(init), -1);
	send_raw(all, sizeof(all), -1);
	send_raw(v1, sizeof(v1), -1);
	send_raw(exited, sizeof(exited), -1);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	send_raw(end, sizeof(end), fd);
	if (fd != -1)
		close(fd);
	send_raw(garbage, sizeof(garbage) - 1, -1);
}

void
front_test_hook(const char *what)
{
	static int enabled = -1;

	if (enabled == -1)
		enabled = getenv("CODEEXECD_TEST_FRONT_FILTER") != NULL;
	if (!enabled || what == NULL)
		return;
	if (strcmp(what, "fork") == 0) {
		log_warnx("test hook: the front forks (CODEEXECD_TEST_FRONT_FILTER)");
		if (fork() == 0)
			_exit(0);
	} else if (strcmp(what, "lie") == 0) {
		lie();
	}
}
