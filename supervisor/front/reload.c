/* reload.c - see reload.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "auth_config.h"
#include "config.h"
#include "log.h"
#include "pool.h"
#include "reload.h"
#include "toolreg.h"
#include "toolreg_azure.h"

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

#define SWAP(a, b)                                                                                 \
	do {                                                                                       \
		__typeof__(a) tmp_ = (a);                                                          \
		(a) = (b);                                                                         \
		(b) = tmp_;                                                                        \
	} while (0)

static int
map_differs(const struct strmap *a, const struct strmap *b)
{
	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->keys[i], b->keys[i]) != 0 || strcmp(a->values[i], b->values[i]) != 0)
			return 1;
	return 0;
}

static int
assets_differ(const struct config_records *a, const struct config_records *b)
{
	const struct config_asset *x = a->v, *y = b->v;

	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		if (config_str_differs(x[i].name, y[i].name) ||
		    config_str_differs(x[i].source, y[i].source) ||
		    config_str_differs(x[i].destination, y[i].destination) ||
		    config_str_differs(x[i].checksum, y[i].checksum))
			return 1;
	return 0;
}

/* Warn about every setting that changed but only takes effect on restart. */
static void
report_restart_needed(const struct config *run, const struct config *new)
{
	struct {
		const char *key;
		int changed;
	} fixed[] = {
		{"name", config_str_differs(run->name, new->name)},
		{"type", run->type != new->type},
		{"dependency_file", config_str_differs(run->dependency_file, new->dependency_file)},
		{"build_dir", config_str_differs(run->build_dir, new->build_dir)},
		{"python", config_str_differs(run->python, new->python)},
		{"system_site_packages", run->system_site_packages != new->system_site_packages},
		{"additional_commands",
		 config_strlist_differs(&run->additional_commands, &new->additional_commands)},
		{"kernel_environment",
		 map_differs(&run->kernel_environment, &new->kernel_environment)},
		/* Kernels are started with it, and only start-up checks it. */
		{"matplotlib_backend",
		 config_str_differs(run->matplotlib_backend, new->matplotlib_backend)},
		{"listen", config_str_differs(run->listen_host, new->listen_host) ||
				   run->listen_port != new->listen_port},
		{"metrics_listen",
		 config_str_differs(run->metrics_listen_host, new->metrics_listen_host) ||
			 run->metrics_listen_port != new->metrics_listen_port},
		/* Set up once, at start-up; the tokens file's content is reread. */
		{"auth", auth_config_differs(run, new)},
		{"entra_client_id or entra_tenant_id",
		 strcmp(run->entra_client_id, new->entra_client_id) != 0 ||
			 strcmp(run->entra_tenant_id, new->entra_tenant_id) != 0},
		{"allow_external_network_boundary",
		 run->allow_external_network_boundary != new->allow_external_network_boundary},
		{"state_dir", config_str_differs(run->state_dir, new->state_dir)},
		{"runtime_dir", config_str_differs(run->runtime_dir, new->runtime_dir)},
		{"log_facility", config_str_differs(run->log_facility, new->log_facility)},
		{"http.threads, keep_alive_s, header_timeout_s or max_connections_per_client",
		 run->http_threads != new->http_threads ||
			 run->http_keep_alive_s != new->http_keep_alive_s ||
			 run->http_header_timeout_s != new->http_header_timeout_s ||
			 run->http_max_connections_per_client != new->http_max_connections_per_client},
		{"asset_cache_dir", config_str_differs(run->asset_cache_dir, new->asset_cache_dir)},
		{"build_timeout_s", run->build_timeout_s != new->build_timeout_s},
		{"conda_executable",
		 config_str_differs(run->conda_executable, new->conda_executable)},
		/* Kernels are started with it (kernel_env.c): keep one value. */
		{"wheelhouse", config_str_differs(run->wheelhouse, new->wheelhouse)},
		{"assets", assets_differ(&run->assets, &new->assets)},
		{"auto_provision", run->auto_provision != new->auto_provision},
		{"asset_timeout_s", run->asset_timeout_s != new->asset_timeout_s},
		{"asset_max_mb", run->asset_max_mb != new->asset_max_mb},
		/* The parent runs it, and keeps its start-up configuration. */
		{"preprocess_command, preprocess_timeout_s or preprocess_max_bytes",
		 config_str_differs(run->preprocess_command, new->preprocess_command) ||
			 run->preprocess_timeout_s != new->preprocess_timeout_s ||
			 run->preprocess_max_bytes != new->preprocess_max_bytes},
		{"user", config_str_differs(run->user, new->user)},
		{"group", config_str_differs(run->group, new->group)},
		{"kernel_network_mode", run->kernel_network_mode != new->kernel_network_mode},
		{"kernel_uid_range", run->kernel_uid_first != new->kernel_uid_first ||
					     run->kernel_uid_last != new->kernel_uid_last},
		{"limits", run->limit_memory_mb != new->limit_memory_mb ||
				   run->limit_pids != new->limit_pids ||
				   run->limit_cpu != new->limit_cpu ||
				   run->limit_nofile != new->limit_nofile ||
				   run->limit_fsize_mb != new->limit_fsize_mb ||
				   run->limits_required != new->limits_required},
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i].changed)
			log_warnx("reload: %s changed; it takes effect only after a restart",
				  fixed[i].key);
}

/* Move the live settings of `new` into `run`; `new` gets the old ones. */
static void
apply_live(struct config *run, struct config *new)
{
	SWAP(run->description, new->description);
	SWAP(run->server_description, new->server_description);
	SWAP(run->default_timeout, new->default_timeout);
	SWAP(run->max_timeout, new->max_timeout);
	SWAP(run->allowed_origins, new->allowed_origins);
	SWAP(run->max_request_bytes, new->max_request_bytes);
	SWAP(run->pool_warm, new->pool_warm);
	SWAP(run->pool_preload, new->pool_preload);
	SWAP(run->pool_max_starting, new->pool_max_starting);
	SWAP(run->pool_warm_max, new->pool_warm_max);
	SWAP(run->pool_max_sessions, new->pool_max_sessions);
	SWAP(run->pool_max_sessions_per_identity, new->pool_max_sessions_per_identity);
	SWAP(run->http_max_streams_per_session, new->http_max_streams_per_session);
	SWAP(run->http_max_calls_per_session, new->http_max_calls_per_session);
	SWAP(run->execution_mode, new->execution_mode);
	SWAP(run->promotion_threshold_s, new->promotion_threshold_s);
	SWAP(run->output_truncation_threshold, new->output_truncation_threshold);
	SWAP(run->rich_output_max_bytes, new->rich_output_max_bytes);
	/* Read by each EXECUTE (pool_exec.c) and each call's check (tools.c). */
	SWAP(run->allow_mime, new->allow_mime);
	SWAP(run->parallel_max_concurrency, new->parallel_max_concurrency);
	SWAP(run->progress_interval_s, new->progress_interval_s);
	SWAP(run->job_retention_s, new->job_retention_s);
	SWAP(run->session_idle_timeout, new->session_idle_timeout);
	SWAP(run->session_idle_timeout_unused, new->session_idle_timeout_unused);
	SWAP(run->shutdown_grace_s, new->shutdown_grace_s);
	/* The registry (toolreg.h) follows `tools`; new kernels take the rest. */
	SWAP(run->tools, new->tools);
	SWAP(run->tools_dir, new->tools_dir);
	SWAP(run->tool_search_backend, new->tool_search_backend);
	SWAP(run->code_prefix, new->code_prefix);
	SWAP(run->azure_endpoint, new->azure_endpoint);
	SWAP(run->azure_index, new->azure_index);
	SWAP(run->azure_api_key_file, new->azure_api_key_file);
	SWAP(run->azure_api_version, new->azure_api_version);
	SWAP(run->azure_timeout_s, new->azure_timeout_s);
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
	/* Built before the locks; it borrows fresh.tools, which apply_live moves. */
	struct toolreg *reg = toolreg_from_config(&fresh, err, sizeof(err));
	if (reg == NULL) {
		log_warnx("reload rejected, running configuration kept: %s", err);
		config_free(&fresh);
		return -1;
	}
	report_restart_needed(running, &fresh);
	pool_lock();
	pthread_rwlock_wrlock(&config_lock);
	apply_live(running, &fresh);
	reg = toolreg_replace(reg);
	pthread_rwlock_unlock(&config_lock);
	pool_unlock();
	toolreg_free(reg); /* before the definitions it borrows */
	config_free(&fresh);
	pool_wake();
	auth_reload(); /* the tokens file; the rest of auth needs a restart */
	log_info("configuration %s reloaded", running->file);
	return 0;
}
