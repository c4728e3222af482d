/*
 * sidecar_reload.c - SIGHUP for the sidecars (sidecars_reload, sidecar.h):
 * the configuration read again, each changed sidecar restarted with its
 * new settings, what kernels and the front hold left for a restart.
 */
#include "autoconf.h"

#include <signal.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "sidecar.h"
#include "sidecar_int.h"

void
sidecars_reload(const char *path)
{
	struct config fresh;
	char err[1024], names[256];

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
		if (sidecar_fields_changed(now, want, RELOAD_RESTART, NULL)) {
			sidecar_field_names(RELOAD_RESTART, names, sizeof(names));
			log_warnx("reload: sidecar %s: %s changed; that takes effect only after a "
				  "restart", now->name, names);
			continue;
		}
		/* New limits need a new control group. */
		s->regroup = sidecar_fields_changed(now, want, RELOAD_SIDECARS, "limits.") > 0;
		sidecar_take_settings(now, want);
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
