/*
 * sidecar_reload.c - SIGHUP for the sidecars (sidecars_reload, sidecar.h):
 * the configuration read again, each changed sidecar restarted with its
 * new settings, what kernels and the front hold left for a restart.
 */
#include "autoconf.h"

#include <signal.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "sidecar.h"
#include "sidecar_int.h"
#include "swap.h"

/* What kernels and the front know it by: changing it needs a restart of the daemon. */
static int
identity_differs(const struct config_sidecar *a, const struct config_sidecar *b)
{
	return strcmp(a->name, b->name) != 0 || strcmp(a->url_env_var, b->url_env_var) != 0 ||
	       strcmp(a->host, b->host) != 0 || a->port_configured != b->port_configured ||
	       a->socket != b->socket;
}

/* Take b's settings into the running a (b gets a's, to be freed). */
static void
take_settings(struct config_sidecar *a, struct config_sidecar *b)
{
	SWAP(a->command, b->command);
	SWAP(a->ncommand, b->ncommand);
	SWAP(a->use_env_python, b->use_env_python);
	SWAP(a->health_path, b->health_path);
	SWAP(a->readiness_timeout_s, b->readiness_timeout_s);
	SWAP(a->env_keys, b->env_keys);
	SWAP(a->env_values, b->env_values);
	SWAP(a->nenv, b->nenv);
	SWAP(a->restart, b->restart);
	SWAP(a->limit_memory_mb, b->limit_memory_mb);
	SWAP(a->limit_pids, b->limit_pids);
	SWAP(a->limit_cpu, b->limit_cpu);
}

void
sidecars_reload(const char *path)
{
	struct config fresh;
	char err[1024];

	if (sidecars_count() == 0)
		return;
	if (config_load(path, &fresh, err, sizeof(err)) == -1) {
		log_warnx("reload: sidecars kept as they run: %s", err);
		return;
	}
	if (fresh.sidecars.n != sidecars_count()) {
		log_warnx("reload: sidecars were added or removed; that takes effect only after a "
			  "restart");
		config_free(&fresh);
		return;
	}
	for (size_t i = 0; i < sidecars_count(); i++) {
		struct sidecar *s = sidecar_at(i);
		struct config_sidecar *now = s->sc, *want = &fresh.sidecars.v[i];
		if (!sidecar_differs(now, want))
			continue;
		if (identity_differs(now, want)) {
			log_warnx("reload: sidecar %s: name, url_env_var, host, port or socket "
				  "changed; that takes effect only after a restart", now->name);
			continue;
		}
		s->regroup = now->limit_memory_mb != want->limit_memory_mb ||
			     now->limit_pids != want->limit_pids ||
			     now->limit_cpu != want->limit_cpu;
		take_settings(now, want);
		log_info("reload: sidecar %s changed; restarting it", now->name);
		if (s->pid > 0) {
			s->reloaded = 1;
			sidecar_kill_group(s, SIGTERM);
		} else if (s->state == PRIV_SC_BACKOFF || s->state == PRIV_SC_FAILED) {
			s->backoff_s = 1;
			s->next_start = clock_mono();
			sidecar_set_state(s, PRIV_SC_BACKOFF);
		}
	}
	config_free(&fresh);
}
