/* front.c - see front.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "config.h"
#include "control.h"
#include "front.h"
#include "sidecar_state.h"
#include "health.h"
#include "http.h"
#include "job.h"
#include "log.h"
#include "mcp.h"
#include "metrics.h"
#include "parent_link.h"
#include "pool.h"
#include "reload.h"
#include "session.h"
#include "sigflags.h"
#include "toolreg.h"
#include "toolreg_azure.h"
#include "tools.h"

#define MAX_POLL 1024

/* The listening control socket, or -1; the parent may hand a new one. */
static int control_fd = -1;

/* runtime_dir's news from the parent (pool_reap.h). */
static void
on_runtime(const char *degraded, int new_control_fd)
{
	health_set_degraded(degraded);
	if (new_control_fd == -1)
		return;
	if (control_fd != -1)
		close(control_fd);
	control_fd = new_control_fd;
}

/* SIGUSR1: one status line for the daemon, one per worker. */
static void
log_status(void)
{
	pool_lock();
	struct json_object *st = control_status();
	pool_unlock();
	struct json_object *workers = json_object_object_get(st, "workers");
	log_info("status: %d sessions, %d idle kernels, %zu workers, up %lld s",
		 json_object_get_int(json_object_object_get(st, "sessions")),
		 json_object_get_int(json_object_object_get(st, "idle_kernels")),
		 json_object_array_length(workers),
		 (long long)json_object_get_int64(json_object_object_get(st, "uptime_s")));
	for (size_t i = 0; i < json_object_array_length(workers); i++)
		log_info("status: worker %s",
			 json_object_to_json_string_ext(json_object_array_get_idx(workers, i),
							JSON_C_TO_STRING_PLAIN));
	json_object_put(st);
}

/* Act on the flags the signal handlers set, except termination. */
static void
handle_signal_flags(struct config *cfg)
{
	sigflags_drain();
	if (sigflags_take(SIGFLAG_HUP))
		reload_config(cfg);
	if (sigflags_take(SIGFLAG_USR1))
		log_status();
}

/* One turn of the loop: wait up to a second (less when a deferred refill
 * falls due), then serve what is ready. */
static void
loop_once(struct config *cfg)
{
	static struct pollfd pfd[MAX_POLL];
	static time_t last_expiry;

	pfd[0] = (struct pollfd){.fd = sigflags_fd(), .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = pool_wake_fd(), .events = POLLIN};
	pfd[2] = (struct pollfd){.fd = control_fd, .events = POLLIN};
	pfd[3] = (struct pollfd){.fd = parent_link_fd(), .events = POLLIN};
	pool_lock();
	int n = pool_pollfds(pfd + 4, MAX_POLL - 4);
	int refill_ms = pool_refill_due_ms();
	pool_unlock();
	int wait_ms = refill_ms >= 0 && refill_ms < 1000 ? refill_ms : 1000;
	if (poll(pfd, (nfds_t)n + 4, wait_ms) == -1 && errno != EINTR)
		fatal("poll");
	if (pfd[0].revents)
		handle_signal_flags(cfg);
	if (pfd[2].revents)
		control_accept(control_fd);
	/* This thread alone reloads the configuration: it reads it unlocked. */
	int second = time(NULL) != last_expiry;
	pool_lock();
	pool_handle(pfd + 4, n);
	pool_reap();
	if (second)
		session_expire(cfg->session_idle_timeout, cfg->session_idle_timeout_unused);
	pool_tick();
	pool_unlock();
	pool_refill();
	if (second) {
		last_expiry = time(NULL);
		job_expire(cfg->job_retention_s);
		batch_expire(cfg->job_retention_s);
	}
}

/* Stop: refuse new requests, let running executions finish (bounded), end all. */
static void
shut_down(struct config *cfg)
{
	time_t deadline = time(NULL) + cfg->shutdown_grace_s;

	log_info("shutting down: refusing new requests, waiting up to %d s for running "
		 "executions", cfg->shutdown_grace_s);
	http_drain();
	for (;;) {
		pool_lock();
		int busy = session_any_busy();
		pool_unlock();
		if (!busy || time(NULL) >= deadline)
			break;
		loop_once(cfg);
	}
	pool_lock();
	session_close_all();
	pool_unlock();
	pool_stop();
	http_stop();
}

/* Tell the process that started the daemon that it serves now. */
static void
serving(int fd)
{
	if (fd == -1)
		return;
	if (write(fd, "1", 1) != 1)
		log_warn("signal readiness to the starting process");
	close(fd);
}

void
front_main(void *arg, int sock, int control, int ready_fd)
{
	struct config *cfg = ((struct front_args *)arg)->cfg;
	char err[1024];

	sigflags_install();
	control_fd = control;
	parent_link_init(sock);
	sidecar_state_init(cfg);
	pool_on_runtime(on_runtime);
	pool_init(cfg);
	session_on_close(batch_session_closed);
	mcp_init(cfg);
	struct toolreg *reg = toolreg_from_config(cfg, err, sizeof(err));
	if (reg == NULL)
		fatalx("%s", err);
	toolreg_replace(reg);
	for (size_t i = 0; i < tools_count(); i++) {
		char name[128];
		tools_name(i, cfg, name, sizeof(name));
		metrics_tool_name((int)i, name);
	}
	int port = http_start(cfg, err, sizeof(err));
	if (port == -1)
		fatalx("%s", err);
	log_info("listening on %s:%d (MCP at /mcp)", cfg->listen_host, port);
	pool_start();
	serving(ready_fd);

	while (!sigflags_term())
		loop_once(cfg);
	shut_down(cfg);
	if (control_fd != -1)
		close(control_fd);
	toolreg_free(toolreg_replace(NULL)); /* before the definitions it borrows */
	log_info("stopped"); /* the front's tag says whose */
	exit(0);
}
