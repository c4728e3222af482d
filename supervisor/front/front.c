/* front.c - see front.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "client_watch.h"
#include "config.h"
#include "control.h"
#include "egress_metrics.h"
#include "front.h"
#include "front_confine.h"
#include "front_filter.h"
#include "health.h"
#include "http.h"
#include "job.h"
#include "log.h"
#include "mcp.h"
#include "metrics.h"
#include "parent_link.h"
#include "pool.h"
#include "reload.h"
#include "secret_file.h"
#include "upstream.h"
#include "session.h"
#include "session_journal.h"
#include "session_state.h"
#include "sidecar_view.h"
#include "sigflags.h"
#include "toolreg.h"
#include "toolreg_azure.h"
#include "tools.h"

#define MAX_POLL 1024

/* The listening control socket, or -1; the parent may hand a new one. */
static int control_fd = -1;

/* Close every descriptor above 2 but the three kept (-1: none). */
static void
close_others(int a, int b, int c)
{
	int keep[3] = {a, b, c}, from = 3;

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i < 3; i++) {
		if (keep[i] < from)
			continue;
		if (keep[i] > from)
			close_range((unsigned)from, (unsigned)keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range((unsigned)from, ~0U, 0);
}

/*
 * Right after the fork from `parent`: keep only the three descriptors the
 * front was given, and confine it (front_confine.h, front_filter.h) before
 * it reads anything untrusted.
 */
static void
confine(const struct front_args *fa, pid_t parent, int sock, int control, int ready_fd)
{
	char why[512];
	int bounding_kept;

	sigset_t ours;
	const int caught[] = {SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1};

	/* Until the front has its own pipe: the parent's is closed below. */
	sigemptyset(&ours);
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaddset(&ours, caught[i]);
	sigprocmask(SIG_BLOCK, &ours, NULL);
	prctl(PR_SET_NAME, "codeexecd-front");
	/* Nothing of the parent's (kernels' pidfds, sweepers' pipes) may stay. */
	log_close();
	close_others(sock, control, ready_fd);
	secret_file_forget(); /* the parent's copies, closed above: it sends them again */
	log_reopen();
	/* Its reasons name the front themselves ("front: ..."). */
	if (front_confine(fa->uid, fa->gid, 0, &bounding_kept, why, sizeof(why)) == -1)
		fatalx("%s", why);
	/* From here every line says it is the front's: codeexecd-front in
	 * syslog, "front: " on stderr. */
	log_set_process("codeexecd-front", "front");
	/* After the uid change, which clears it; and the parent may be gone already. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		fatalx("the privileged parent is gone");
	if (front_filter_install(why, sizeof(why)) == -1)
		fatalx("%s", why);
	if (bounding_kept)
		log_info("the capability bounding set stays as the parent's (it lacks "
			 "CAP_SETPCAP); no_new_privs keeps the front from gaining any of it");
}

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
	if (sigflags_take(SIGFLAG_HUP)) {
		/* The parent sent the secret files again before the signal: take them first. */
		pool_lock();
		pool_reap();
		pool_unlock();
		reload_config(cfg);
	}
	if (sigflags_take(SIGFLAG_USR1))
		log_status();
}

/* Milliseconds to the next second of the wall clock, which the loop's
 * once-a-second work (the journal, expiry) counts by: waking a whole second
 * after a wake just before a boundary would leave the journal two seconds
 * behind. */
static int
ms_to_next_second(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME, &now) == -1)
		return 1000;
	return (int)(1000 - now.tv_nsec / 1000000);
}

/* One turn of the loop: wait up to the next second (less when a deferred
 * refill falls due), then serve what is ready. */
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
	int nc = client_watch_pollfds(pfd + 4 + n, MAX_POLL - 4 - n);
	int refill_ms = pool_refill_due_ms();
	pool_unlock();
	int wait_ms = ms_to_next_second();
	if (refill_ms >= 0 && refill_ms < wait_ms)
		wait_ms = refill_ms;
	if (poll(pfd, (nfds_t)(n + nc) + 4, wait_ms) == -1 && errno != EINTR)
		fatal("poll");
	if (pfd[0].revents)
		handle_signal_flags(cfg);
	if (pfd[2].revents)
		control_accept(control_fd);
	/* This thread alone reloads the configuration: it reads it unlocked. */
	int second = time(NULL) != last_expiry;
	pool_lock();
	pool_handle(pfd + 4, n);
	client_watch_handle(pfd + 4 + n, nc);
	pool_reap();
	if (second) {
		session_expire(cfg->session_idle_timeout, cfg->session_idle_timeout_unused);
		session_hibernate_idle(cfg->session_hibernate_after, cfg->session_retention,
				       cfg->max_hibernated_sessions);
	}
	pool_tick();
	pool_unlock();
	pool_revive_serve();
	pool_refill();
	if (second) {
		session_journal_write(0);
		last_expiry = time(NULL);
		job_expire(cfg->job_retention_s);
		batch_expire(cfg->job_retention_s);
	}
}

/*
 * persist_sessions: checkpoint every session with a kernel (until monotonic
 * `deadline`), keep every session directory, and write the journal, so that
 * the next start has every session back, hibernated (session_journal.h).
 */
static void
keep_sessions(struct config *cfg, time_t deadline)
{
	pool_lock();
	int n = session_state_stop();
	pool_unlock();
	if (n)
		log_info("checkpointing for the next start: %d sessions", n);
	for (;;) {
		pool_lock();
		int saving = session_state_saving();
		pool_unlock();
		if (!saving)
			break;
		if (time(NULL) >= deadline) {
			log_warnx("%d sessions were not checkpointed within shutdown_grace_s: they "
				  "keep their last checkpoint", saving);
			break;
		}
		loop_once(cfg);
	}
	pool_lock();
	session_keep_all_dirs();
	pool_unlock();
	session_journal_write(1);
	log_info("sessions kept in the journal for the next start: %d", session_count());
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
	if (cfg->persist_sessions)
		keep_sessions(cfg, deadline);
	else {
		pool_lock();
		session_close_all();
		pool_unlock();
	}
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
front_main(void *arg, pid_t parent, int sock, int control, int ready_fd)
{
	struct front_args *fa = arg;
	struct config *cfg = fa->cfg;
	char err[1024];

	confine(fa, parent, sock, control, ready_fd);
	sigflags_install();
	control_fd = control;
	control_init(fa->control);
	parent_link_init(sock);
	parent_link_secrets();
	sidecar_view_init(cfg);
	pool_on_runtime(on_runtime);
	handle_init(cfg->node_name);
	pool_init(cfg);
	session_on_close(batch_session_closed);
	session_state_init(cfg);
	/* The parent named every directory it kept before SECRETS_SENT. */
	session_journal_load(cfg);
	pool_on_dir_left(session_journal_dir_left);
	pool_on_worker_left(session_journal_worker_left, session_journal_resumed);
	pool_lock();
	pool_reap();
	session_journal_settle();
	pool_unlock();
	session_busy_elsewhere(batch_running);
	mcp_init(cfg);
	struct toolreg *reg = toolreg_from_config(cfg, err, sizeof(err));
	if (reg == NULL)
		fatalx("%s", err);
	toolreg_replace(reg);
	upstream_init(cfg);
	egress_metrics_init(cfg);
	pool_on_upstream_call(upstream_kernel_request);
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
