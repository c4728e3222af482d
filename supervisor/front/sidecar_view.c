/* sidecar_view.c - see sidecar_view.h. */
#include "autoconf.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "log.h"
#include "sidecar_view.h"

static const char *const state_names[] = {"starting", "running", "backoff", "failed",
					  "stopped"};

/* A leaf lock: held only to copy states in or out. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct config *conf;
static struct priv_sidecar_state states[PRIV_SIDECARS_MAX];
static int heard[PRIV_SIDECARS_MAX]; /* a state came for it */

static size_t
count(void)
{
	size_t n = conf ? conf->sidecars.n : 0;
	return n < PRIV_SIDECARS_MAX ? n : PRIV_SIDECARS_MAX;
}

void
sidecar_view_init(const struct config *cfg)
{
	pthread_mutex_lock(&lock);
	conf = cfg;
	memset(states, 0, sizeof(states));
	memset(heard, 0, sizeof(heard));
	pthread_mutex_unlock(&lock);
}

void
sidecar_view_set(const struct priv_sidecar_state *st)
{
	if (st->index >= count()) {
		log_warnx("the privileged parent sent the state of sidecar %u, which is not "
			  "configured", st->index);
		return;
	}
	pthread_mutex_lock(&lock);
	states[st->index] = *st;
	heard[st->index] = 1;
	pthread_mutex_unlock(&lock);
}

struct json_object *
sidecar_view_json(void)
{
	struct json_object *a = json_object_new_array();
	time_t now = time(NULL);

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < count(); i++) {
		const struct config_sidecar *sc = &conf->sidecars.v[i];
		const struct priv_sidecar_state *st = &states[i];
		struct json_object *o = json_object_new_object();
		int running = heard[i] && st->pid != 0;
		json_object_object_add(o, "name", json_object_new_string(sc->name));
		json_object_object_add(o, "state",
				       json_object_new_string(heard[i] ? state_names[st->state]
								       : "unknown"));
		json_object_object_add(o, "pid", json_object_new_int64(st->pid));
		json_object_object_add(o, "restarts", json_object_new_int64(st->restarts));
		json_object_object_add(o, "uptime_s",
				       json_object_new_int64(running && st->started
								     ? (int64_t)now - st->started
								     : 0));
		json_object_object_add(o, "rss_kb", json_object_new_int64(st->rss_kb));
		int64_t port = st->port ? (int64_t)st->port : (int64_t)sc->port;
		json_object_object_add(o, "port", json_object_new_int64(port));
		json_object_object_add(o, "url_env_var", json_object_new_string(sc->url_env_var));
		json_object_array_add(a, o);
	}
	pthread_mutex_unlock(&lock);
	return a;
}

int
sidecar_view_down(char *why, size_t why_len)
{
	size_t used = 0;
	int down = 0;

	if (why_len)
		why[0] = '\0';
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < count(); i++) {
		if (!heard[i] || states[i].state == PRIV_SC_RUNNING)
			continue;
		down = 1;
		int n = snprintf(why + used, used < why_len ? why_len - used : 0,
				 "%ssidecar %s is not running (%s, %u restarts)", used ? "; " : "",
				 conf->sidecars.v[i].name, state_names[states[i].state],
				 states[i].restarts);
		if (n > 0)
			used += (size_t)n;
		if (used >= why_len)
			break;
	}
	pthread_mutex_unlock(&lock);
	return down;
}
