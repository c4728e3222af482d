/* reload.c - see reload.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>

#include "auth.h"
#include "config.h"
#include "log.h"
#include "pool.h"
#include "reload.h"
#include "toolreg.h"
#include "toolreg_azure.h"
#include "upstream.h"

/* config_lock: the live settings (see reload.h). Taken after pool_lock. */
static pthread_rwlock_t config_lock = PTHREAD_RWLOCK_INITIALIZER;

void
config_read_lock(void)
{
	pthread_rwlock_rdlock(&config_lock);
}

void
config_read_unlock(void)
{
	pthread_rwlock_unlock(&config_lock);
}

/*
 * Warn about every setting that changed but only takes effect on restart:
 * the keys of scope RELOAD_RESTART in the table. `sidecars` is the
 * parent's to re-read (sidecar_reload.c).
 */
static void
report_restart_needed(const struct config *run, const struct config *new)
{
	for (const struct config_key *k = config_keys(); k->name != NULL; k++)
		if (k->scope == RELOAD_RESTART && config_key_differs(k, run, new))
			log_warnx("reload: %s changed; it takes effect only after a restart",
				  k->name);
}

int
reload_config(struct config *running)
{
	struct config fresh;
	char err[1024];

	if (config_load(running->file, &fresh, err, sizeof(err)) == -1) {
		log_warnx("reload rejected, running configuration kept: %s", err);
		return -1;
	}
	/* Built before the locks; it borrows fresh.tools, which config_swap_live moves. */
	struct toolreg *reg = toolreg_from_config(&fresh, err, sizeof(err));
	if (reg == NULL) {
		log_warnx("reload rejected, running configuration kept: %s", err);
		config_free(&fresh);
		return -1;
	}
	report_restart_needed(running, &fresh);
	pool_lock();
	pthread_rwlock_wrlock(&config_lock);
	/* The live keys of the table (RELOAD_LIVE) and nothing else. */
	config_swap_live(running, &fresh);
	reg = toolreg_replace(reg);
	pthread_rwlock_unlock(&config_lock);
	pool_unlock();
	toolreg_free(reg); /* before the definitions it borrows */
	config_free(&fresh);
	pool_wake();
	auth_reload(); /* the tokens file; the rest of auth needs a restart */
	upstream_relist();
	log_info("configuration %s reloaded", running->file);
	return 0;
}
