/*
 * sidecar.c - see sidecar.h: the sidecars' table, their start-up and
 * shutdown, and the watch of the loop (exits, restarts with back-off,
 * reports to the front). Starting one is sidecar_launch.c's, its output
 * sidecar_output.c's, its readiness sidecar_ready.c's, SIGHUP
 * sidecar_reload.c's (sidecar_int.h).
 */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "log.h"
#include "relay.h"
#include "sidecar.h"
#include "sidecar_int.h"
#include "wstatus.h"
#include "xmalloc.h"

/* Back-off before a restart: doubled from 1 s up to this, reset after a long run. */
#define BACKOFF_MAX_S 60
#define BACKOFF_RESET_S 60
/* Seconds between reports of the sidecars' memory to the front. */
#define REPORT_S 5

static struct {
	struct sidecar *v;
	size_t n;
	const struct cgroup_layout *cgroups;
	int stopping;
	double last_report;
} S;

size_t
sidecars_count(void)
{
	return S.n;
}

struct sidecar *
sidecar_at(size_t i)
{
	return &S.v[i];
}

void
sidecar_set_state(struct sidecar *s, enum priv_sidecar_run st)
{
	s->state = st;
	s->changed = 1;
}

/* The sidecar's own control group, with its limits. NULL (logged) if none. */
static struct cgroup *
make_group(const struct config_sidecar *sc, char *why, size_t why_len)
{
	struct cgroup_limits lim = {(uint64_t)sc->limit_memory_mb, (uint64_t)sc->limit_pids,
				    sc->limit_cpu};
	char *name = xasprintf("sidecar-%s", sc->name);
	struct cgroup *g = NULL;

	if (S.cgroups)
		g = cgroup_create(S.cgroups, name, &lim, why, why_len);
	free(name);
	return g;
}

void
sidecar_kill_group(struct sidecar *s, int sig)
{
	if (s->pid > 0 && kill(-s->pid, sig) == -1 && errno != ESRCH)
		log_warn("kill sidecar %s (%d)", s->sc->name, (int)s->pid);
}

/* Kill and reap every sidecar started: start-up failed. */
static void
abandon_all(void)
{
	int status;

	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->pid > 0) {
			sidecar_kill_group(s, SIGKILL);
			while (waitpid(s->pid, &status, 0) == -1 && errno == EINTR)
				;
			s->pid = 0;
		}
		if (s->relay > 0) {
			kill(-s->relay, SIGKILL);
			while (waitpid(s->relay, &status, 0) == -1 && errno == EINTR)
				;
			s->relay = 0;
		}
		if (s->out != -1)
			close(s->out);
		s->out = -1;
		if (s->cg)
			cgroup_destroy(&s->cg);
	}
}

int
sidecars_start(struct config *cfg, const struct cgroup_layout *cgroups, uid_t uid, gid_t gid,
	       int foreground, char *why, size_t why_len)
{
	int sockets = 0;

	S.n = cfg->sidecars.n;
	/* Kernels of the daemon's uid: only that uid. Kernels of kernel_uid_range
	 * have no group in common: every local user, who reaches the TCP port too. */
	sidecar_launch_init(uid, gid, foreground, cfg->kernel_uid_first == 0 ? 0600 : 0666);
	for (size_t i = 0; i < S.n; i++)
		sockets += cfg->sidecars.v[i].socket;
	if (sockets && sidecar_relays_prepare(cfg, why, why_len) == -1)
		return -1;
	S.v = xcalloc(S.n + 1, sizeof(*S.v));
	S.cgroups = cgroups;
	if (uid == (uid_t)-1 && geteuid() == 0 && S.n > 0)
		return err_set(why, why_len, "sidecars never run as root: set user");
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		char cgwhy[512];
		s->sc = &cfg->sidecars.v[i];
		s->cfg = cfg;
		s->out = -1;
		s->backoff_s = 1;
		if (s->sc->port == 0 &&
		    sidecar_pick_port(s->sc->host, &s->sc->port, why, why_len) == -1)
			goto fail;
		s->cg = make_group(s->sc, cgwhy, sizeof(cgwhy));
		if (s->cg == NULL && cgroups &&
		    (s->sc->limit_memory_mb || s->sc->limit_pids || s->sc->limit_cpu)) {
			err_set(why, why_len, "sidecar %s: %s", s->sc->name, cgwhy);
			goto fail;
		}
		if (s->cg == NULL && cgroups)
			log_warnx("sidecar %s runs without its control group: %s", s->sc->name,
				  cgwhy);
		if (s->cg == NULL && !cgroups &&
		    (s->sc->limit_memory_mb || s->sc->limit_pids || s->sc->limit_cpu))
			log_warnx("sidecar %s runs without its limits: there are no control "
				  "groups here", s->sc->name);
		if (sidecar_spawn(s, why, why_len) == -1)
			goto fail;
		if (s->sc->socket) {
			free(s->sc->socket_path);
			s->sc->socket_path =
				xasprintf("%s/sidecars/%s.sock", cfg->runtime_dir, s->sc->name);
			if (sidecar_spawn_relay(s, why, why_len) == -1)
				goto fail;
		}
	}
	for (size_t i = 0; i < S.n; i++)
		if (sidecar_await_ready(&S.v[i], why, why_len) == -1 ||
		    (S.v[i].relay && sidecar_await_relay(&S.v[i], why, why_len) == -1))
			goto fail;
	return 0;
fail:
	abandon_all();
	return -1;
}

/* ---- watching ---- */

int
sidecars_pollfds(struct pollfd *pfd, int max)
{
	int n = 0;

	for (size_t i = 0; i < S.n && n < max; i++)
		if (S.v[i].out != -1) {
			pfd[n].fd = S.v[i].out;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
	return n;
}

int
sidecars_child_exited(pid_t pid, int status)
{
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->relay == pid) {
			char *how = wstatus_text(status);
			s->relay = 0;
			s->relay_next = clock_mono() + 1;
			if (!S.stopping)
				log_warnx("sidecar %s: its relay %s; starting it again in 1 s",
					  s->sc->name, how);
			free(how);
			return 1;
		}
		if (s->pid != pid)
			continue;
		char *how = wstatus_text(status);
		sidecar_drain(s);
		/* A process it left may hold the pipe open: its output goes unread. */
		if (s->out != -1)
			close(s->out);
		s->out = -1;
		s->pid = 0;
		if (s->cg)
			cgroup_kill_all(s->cg); /* what it left in its group */
		if (S.stopping) {
			log_info("sidecar %s %s", s->sc->name, how);
			sidecar_set_state(s, PRIV_SC_STOPPED);
		} else if (s->reloaded) {
			log_info("sidecar %s %s; starting it with its new settings", s->sc->name,
				 how);
			s->reloaded = 0;
			s->backoff_s = 1;
			s->next_start = clock_mono();
			sidecar_set_state(s, PRIV_SC_BACKOFF);
		} else if (s->sc->restart == SIDECAR_RESTART_NEVER ||
			   (s->sc->restart == SIDECAR_RESTART_ON_FAILURE && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0)) {
			log_warnx("sidecar %s %s; restart is %s: it stays down", s->sc->name, how,
				  sidecar_restart_name(s->sc->restart));
			sidecar_set_state(s, PRIV_SC_FAILED);
		} else {
			if (clock_mono() - s->started >= BACKOFF_RESET_S)
				s->backoff_s = 1;
			s->next_start = clock_mono() + s->backoff_s;
			log_warnx("sidecar %s %s; restarting it in %d s", s->sc->name, how,
				  s->backoff_s);
			s->backoff_s = s->backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S
									: s->backoff_s * 2;
			sidecar_set_state(s, PRIV_SC_BACKOFF);
		}
		free(how);
		return 1;
	}
	return 0;
}

void
sidecars_tick(void)
{
	char why[512];

	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->out != -1)
			sidecar_drain(s);
		if (S.stopping)
			continue;
		if (s->sc->socket && s->relay == 0 && clock_mono() >= s->relay_next &&
		    sidecar_spawn_relay(s, why, sizeof(why)) == -1) {
			log_warnx("%s", why);
			s->relay_next = clock_mono() + 5;
		}
		if (s->state == PRIV_SC_BACKOFF && clock_mono() >= s->next_start) {
			s->restarts++;
			if (s->regroup) {
				char cgwhy[256];
				s->regroup = 0;
				if (s->cg)
					cgroup_destroy(&s->cg);
				if (S.cgroups &&
				    (s->cg = make_group(s->sc, cgwhy, sizeof(cgwhy))) == NULL)
					log_warnx("sidecar %s runs without its control group and "
						  "limits: %s", s->sc->name, cgwhy);
			}
			if (sidecar_spawn(s, why, sizeof(why)) == -1) {
				log_warnx("%s", why);
				s->next_start = clock_mono() + s->backoff_s;
			}
		} else if (s->state == PRIV_SC_STARTING && s->pid > 0) {
			sidecar_check_starting(s);
		}
	}
}

/* Resident memory of `pid` in KiB, from /proc; 0 if it cannot be read. */
static unsigned
rss_kb(pid_t pid)
{
	char path[64], line[128];
	unsigned kb = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %u kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

void
sidecars_report(int all, void (*tell)(const struct priv_msg *m))
{
	int refresh = clock_mono() - S.last_report >= REPORT_S;

	if (refresh)
		S.last_report = clock_mono();
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (!all && !refresh && !s->changed)
			continue;
		struct priv_msg m = {.type = PRIV_SIDECAR_STATE};
		m.u.sidecar.index = (uint32_t)i;
		m.u.sidecar.state = s->state;
		m.u.sidecar.pid = s->pid > 0 ? (uint32_t)s->pid : 0;
		m.u.sidecar.restarts = s->restarts;
		m.u.sidecar.started = (uint32_t)s->started_wall;
		m.u.sidecar.rss_kb = s->pid > 0 ? rss_kb(s->pid) : 0;
		m.u.sidecar.port = (uint32_t)s->sc->port;
		s->changed = 0;
		tell(&m);
	}
}

void
sidecars_stop(double grace_s)
{
	double end = clock_mono() + grace_s;
	int live = 0, status;

	S.stopping = 1;
	for (size_t i = 0; i < S.n; i++) {
		struct sidecar *s = &S.v[i];
		if (s->pid > 0) {
			log_info("stopping sidecar %s (%d)", s->sc->name, (int)s->pid);
			sidecar_kill_group(s, SIGTERM);
			live++;
		}
		if (s->relay > 0) {
			kill(-s->relay, SIGTERM);
			while (waitpid(s->relay, &status, 0) == -1 && errno == EINTR)
				;
			s->relay = 0;
		}
		if (s->sc->socket_path) {
			char *broker = xasprintf("%s" RELAY_BROKER_SUFFIX, s->sc->socket_path);
			if (unlink(s->sc->socket_path) == -1 && errno != ENOENT)
				log_warn("remove %s", s->sc->socket_path);
			if (unlink(broker) == -1 && errno != ENOENT)
				log_warn("remove %s", broker);
			free(broker);
		}
	}
	while (live > 0) {
		/* Only our own: the uid sweepers' children are uid.c's to reap. */
		for (size_t i = 0; i < S.n; i++) {
			pid_t pid = S.v[i].pid;
			if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid)
				live -= sidecars_child_exited(pid, status);
			else if (pid > 0 && errno == ECHILD)
				live -= sidecars_child_exited(pid, 0);
		}
		if (live > 0 && clock_mono() > end) {
			for (size_t i = 0; i < S.n; i++)
				if (S.v[i].pid > 0) {
					log_warnx("sidecar %s did not stop within %g s "
						  "(shutdown_grace_s); killing it",
						  S.v[i].sc->name, grace_s);
					sidecar_kill_group(&S.v[i], SIGKILL);
				}
			end = clock_mono() + 3600;
		}
		for (size_t i = 0; i < S.n; i++)
			if (S.v[i].out != -1)
				sidecar_drain(&S.v[i]);
		if (live > 0)
			usleep(50 * 1000);
	}
	for (size_t i = 0; i < S.n; i++) {
		if (S.v[i].out != -1)
			close(S.v[i].out);
		S.v[i].out = -1;
		if (S.v[i].cg)
			cgroup_destroy(&S.v[i].cg);
	}
}
