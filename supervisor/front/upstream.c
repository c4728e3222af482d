/* upstream.c - see upstream.h: the registry of upstream servers. */
#include "autoconf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "config.h"
#include "err.h"
#include "log.h"
#include "mcp_client.h"
#include "metrics.h"
#include "secret_file.h"
#include "upstream.h"
#include "xmalloc.h"

/* The longest pause between attempts to list an unreachable server, and
 * to open again a stream of list changes that ended. */
#define LIST_RETRY_MAX_S 60
/* Pages of tools/list followed, at most: a server that never ends its list. */
#define LIST_PAGES_MAX 50

struct upstream {
	const struct config_upstream *cfg;
	char *token;			/* NULL: none */
	pthread_mutex_t lock;		/* guards tools and why */
	struct json_object *tools;	/* the exposed tools, once listed */
	char why[512];			/* what the last listing met */
	int stale;			/* list again: SIGHUP, or listChanged */
	int watching;			/* a thread follows its list changes */
	atomic_int revision;		/* enum mcpc_revision, once known */
	pthread_mutex_t idle_lock;	/* guards idle */
	struct mcpc *idle[UPSTREAM_IDLE_MAX];	/* opened sessions no call uses */
	int n_idle;
	atomic_ullong calls[UPSTREAM_OUTCOME_N];
};

/* Wakes the lister: a list is stale, or a kernel found one missing. */
static pthread_mutex_t kick_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kick_cond = PTHREAD_COND_INITIALIZER;
static int kicked;

static struct upstream *ups;
static size_t n_ups;

static const char *const outcome_names[UPSTREAM_OUTCOME_N] = {
	"ok", "tool_error", "denied", "limit", "timeout",
	"too_large", "unavailable", "failed", "cancelled",
};

const char *
upstream_outcome_name(enum upstream_outcome o)
{
	return outcome_names[o];
}

size_t
upstream_count(void)
{
	return n_ups;
}

const char *
upstream_name(size_t i)
{
	return ups[i].cfg->name;
}

const struct config_upstream *
upstream_config(size_t i)
{
	return ups[i].cfg;
}

const char *
upstream_token(size_t i)
{
	return ups[i].token;
}



int
upstream_find(const char *name)
{
	for (size_t i = 0; i < n_ups; i++)
		if (strcmp(ups[i].cfg->name, name) == 0)
			return (int)i;
	return -1;
}

/* Whether `s` is one of list `l`. */
static int
listed(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

int
upstream_allowed(size_t i, const char *identity)
{
	return ups[i].cfg->allow.n == 0 || listed(&ups[i].cfg->allow, identity);
}

int
upstream_exposes(size_t i, const char *tool)
{
	return ups[i].cfg->tools.n == 0 || listed(&ups[i].cfg->tools, tool);
}

int
upstream_needs_approval(size_t i, const char *tool)
{
	return listed(&ups[i].cfg->approve, tool);
}

/* Keep of tools/list's page `result` the tools `u` exposes, in `out`. */
static void
keep_tools(size_t i, struct json_object *result, struct json_object *out)
{
	struct json_object *tools, *name;

	if (!json_object_object_get_ex(result, "tools", &tools) ||
	    !json_object_is_type(tools, json_type_array))
		return;
	for (size_t k = 0; k < json_object_array_length(tools); k++) {
		struct json_object *t = json_object_array_get_idx(tools, k);
		if (!json_object_object_get_ex(t, "name", &name) ||
		    !json_object_is_type(name, json_type_string) ||
		    !upstream_exposes(i, json_object_get_string(name)))
			continue;
		json_object_array_add(out, json_object_get(t));
	}
}

static void watch_changes(size_t i);

/* Wake the lister. */
static void
kick(void)
{
	pthread_mutex_lock(&kick_lock);
	kicked = 1;
	pthread_cond_signal(&kick_cond);
	pthread_mutex_unlock(&kick_lock);
}

/* The options every exchange with upstream i uses. */
struct mcpc_opts
upstream_opts(size_t i)
{
	const struct upstream *u = &ups[i];

	return (struct mcpc_opts){.client_name = "codeexecd", .token = u->token,
				  .timeout_s = (long)(u->cfg->timeout_s + 0.999),
				  .max_bytes = (size_t)u->cfg->max_response_bytes,
				  .session_optional = 1,
				  .revision = atomic_load(&u->revision)};
}

/* List upstream i's tools (every page); 0, or -1 with u->why set. */
static int
list_tools(size_t i)
{
	struct upstream *u = &ups[i];
	struct mcpc_opts opts = upstream_opts(i);
	struct json_object *all = json_object_new_array();
	struct mcpc m;
	int rc = -1;

	if (mcpc_open(&m, u->cfg->url, &opts) == 0) {
		atomic_store(&u->revision, m.modern ? MCPC_MODERN : MCPC_LEGACY);
		const char *cursor = NULL;
		struct json_object *page = NULL, *next;
		for (int p = 0; p < LIST_PAGES_MAX; p++) {
			struct json_object *params = json_object_new_object();
			if (cursor)
				json_object_object_add(params, "cursor", json_object_new_string(cursor));
			json_object_put(page);
			if ((page = mcpc_call(&m, "tools/list", params)) == NULL)
				break;
			keep_tools(i, page, all);
			if (!json_object_object_get_ex(page, "nextCursor", &next) ||
			    !json_object_is_type(next, json_type_string)) {
				rc = 0;
				break;
			}
			cursor = json_object_get_string(next);
		}
		json_object_put(page);
	}
	pthread_mutex_lock(&u->lock);
	int watch = 0;
	if (rc == 0) {
		json_object_put(u->tools);
		u->tools = all;
		all = NULL;
		u->why[0] = '\0';
		u->stale = 0;
		log_info("upstream %s: %zu tools (MCP %s)", u->cfg->name,
			 json_object_array_length(u->tools), m.modern ? "2026-07-28" : m.protocol_version);
		/* A stream of changes needs a session to hang on. */
		watch = m.tools_list_changed && m.session_id[0] && !u->watching;
		u->watching |= watch;
	} else {
		snprintf(u->why, sizeof(u->why), "%s", m.error[0] ? m.error : "no answer");
	}
	pthread_mutex_unlock(&u->lock);
	json_object_put(all);
	mcpc_close(&m);
	if (watch)
		watch_changes(i);
	return rc;
}

/* List u again soon. */
static void
mark_stale(struct upstream *u)
{
	pthread_mutex_lock(&u->lock);
	u->stale = 1;
	pthread_mutex_unlock(&u->lock);
	kick();
}

/* A message on upstream i's stream: a change of its tools makes its list stale. */
static void
on_server_message(struct json_object *msg, void *arg)
{
	struct upstream *u = arg;
	struct json_object *method;

	if (!json_object_object_get_ex(msg, "method", &method) ||
	    strcmp(json_object_get_string(method), "notifications/tools/list_changed") != 0)
		return;
	log_info("upstream %s: its tools changed; listing them again", u->cfg->name);
	mark_stale(u);
}

/* Follow upstream i's list changes on a session's GET stream, for good. */
static void *
watcher(void *arg)
{
	struct upstream *u = arg;
	unsigned pause = 1;

	for (;;) {
		struct mcpc_opts opts = upstream_opts((size_t)(u - ups));
		struct mcpc m;
		opts.revision = MCPC_LEGACY;
		if (mcpc_open(&m, u->cfg->url, &opts) == 0) {
			/* Changes while no stream was open are not told: list again. */
			mark_stale(u);
			pause = 1;
			mcpc_listen(&m, on_server_message, u);
		}
		mcpc_close(&m);
		log_warnx("upstream %s: its stream of tool changes ended; opening it again in %u s",
			  u->cfg->name, pause);
		sleep(pause);
		pause = pause * 2 > LIST_RETRY_MAX_S ? LIST_RETRY_MAX_S : pause * 2;
	}
	return NULL;
}

static void
start_detached(void *(*fn)(void *), void *arg, const char *what)
{
	pthread_t t;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, fn, arg) != 0)
		fatalx("pthread_create for %s", what);
	pthread_attr_destroy(&attr);
}

static void
watch_changes(size_t i)
{
	start_detached(watcher, &ups[i], "an upstream's stream of tool changes");
}

struct json_object *
upstream_tools(size_t i, int refresh, char *why, size_t why_len)
{
	struct upstream *u = &ups[i];
	struct json_object *t = NULL;

	pthread_mutex_lock(&u->lock);
	int missing = u->tools == NULL;
	pthread_mutex_unlock(&u->lock);
	if (missing && refresh)
		list_tools(i);
	pthread_mutex_lock(&u->lock);
	if (u->tools)
		json_object_deep_copy(u->tools, &t, NULL);
	else
		err_set(why, why_len, "upstream %s is not reachable: %s", u->cfg->name,
			u->why[0] ? u->why : "not listed yet");
	pthread_mutex_unlock(&u->lock);
	return t;
}

/* List every upstream not listed yet or stale; nonzero if one could not be. */
static int
list_needed(unsigned pause)
{
	int missing = 0;

	for (size_t i = 0; i < n_ups; i++) {
		pthread_mutex_lock(&ups[i].lock);
		int need = ups[i].tools == NULL || ups[i].stale;
		pthread_mutex_unlock(&ups[i].lock);
		if (need && list_tools(i) == -1) {
			missing = 1;
			log_warnx("upstream %s: cannot list its tools (%s); trying again in %u s",
				  ups[i].cfg->name, ups[i].why, pause);
		}
	}
	return missing;
}

/* The lister: lists what is missing or stale, backing off while one fails. */
static void *
lister(void *arg)
{
	unsigned pause = 1;

	(void)arg;
	for (;;) {
		int missing = list_needed(pause);
		pthread_mutex_lock(&kick_lock);
		if (!kicked && missing) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += pause;
			pthread_cond_timedwait(&kick_cond, &kick_lock, &until);
		}
		while (!kicked && !missing)
			pthread_cond_wait(&kick_cond, &kick_lock);
		kicked = 0;
		pthread_mutex_unlock(&kick_lock);
		pause = !missing ? 1 : pause * 2 > LIST_RETRY_MAX_S ? LIST_RETRY_MAX_S : pause * 2;
	}
	return NULL;
}

void
upstream_relist(void)
{
	for (size_t i = 0; i < n_ups; i++)
		mark_stale(&ups[i]);
	if (n_ups)
		log_info("reload: listing the tools of %zu upstreams again", n_ups);
}

/* Upstream i's token from its token_file (the parent's copy); fatal when unreadable. */
static void
take_token(size_t i)
{
	char key[128], why[512];
	const struct config_upstream *c = ups[i].cfg;

	if (c->token_file[0] == '\0')
		return;
	snprintf(key, sizeof(key), "upstream %s: token_file", c->name);
	if ((ups[i].token = secret_file_line(key, c->token_file, why, sizeof(why))) == NULL)
		fatalx("%s", why);
}

void
upstream_init(const struct config *cfg)
{
	n_ups = cfg->upstreams.n;
	if (n_ups == 0)
		return;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("upstreams: libcurl could not be initialized");
	ups = xcalloc(n_ups, sizeof(*ups));
	metrics_add_renderer(upstream_render_metrics);
	for (size_t i = 0; i < n_ups; i++) {
		ups[i].cfg = config_upstream_at(cfg, i);
		pthread_mutex_init(&ups[i].lock, NULL);
		pthread_mutex_init(&ups[i].idle_lock, NULL);
		take_token(i);
		if (ups[i].cfg->required && list_tools(i) == -1)
			fatalx("upstream %s is required and cannot be listed: %s",
			       ups[i].cfg->name, ups[i].why);
	}
	start_detached(lister, NULL, "the upstream lister");
}

struct mcpc *
upstream_session(size_t i, int *reused)
{
	struct upstream *u = &ups[i];
	struct mcpc *m = NULL;

	pthread_mutex_lock(&u->idle_lock);
	if (u->n_idle > 0)
		m = u->idle[--u->n_idle];
	pthread_mutex_unlock(&u->idle_lock);
	*reused = m != NULL;
	if (m)
		return m;
	struct mcpc_opts opts = upstream_opts(i);
	m = xmalloc(sizeof(*m));
	mcpc_open(m, u->cfg->url, &opts); /* not ready: m->error says why */
	return m;
}

void
upstream_session_end(size_t i, struct mcpc *m, int keep)
{
	struct upstream *u = &ups[i];

	m->opts.stop = NULL;
	m->opts.stop_arg = NULL;
	pthread_mutex_lock(&u->idle_lock);
	if (keep && m->ready && u->n_idle < UPSTREAM_IDLE_MAX) {
		u->idle[u->n_idle++] = m;
		m = NULL;
	}
	pthread_mutex_unlock(&u->idle_lock);
	if (m) {
		mcpc_close(m);
		free(m);
	}
}

void
upstream_count_call(size_t i, enum upstream_outcome o)
{
	atomic_fetch_add(&ups[i].calls[o], 1);
}

void
upstream_render_metrics(struct buf *b)
{
	if (n_ups == 0)
		return;
	buf_adds(b, "# HELP codeexecd_upstream_calls_total Kernels' calls of upstream MCP "
		    "servers' tools (code mode), by upstream and outcome.\n"
		    "# TYPE codeexecd_upstream_calls_total counter\n");
	for (size_t i = 0; i < n_ups; i++)
		for (int o = 0; o < UPSTREAM_OUTCOME_N; o++)
			buf_printf(b, "codeexecd_upstream_calls_total{upstream=\"%s\",outcome=\"%s\"} "
				      "%llu\n",
				   ups[i].cfg->name, outcome_names[o],
				   (unsigned long long)atomic_load(&ups[i].calls[o]));
	buf_adds(b, "# HELP codeexecd_upstream_tools Tools each upstream exposes (-1: not "
		    "listed yet).\n# TYPE codeexecd_upstream_tools gauge\n");
	for (size_t i = 0; i < n_ups; i++) {
		pthread_mutex_lock(&ups[i].lock);
		long n = ups[i].tools ? (long)json_object_array_length(ups[i].tools) : -1;
		pthread_mutex_unlock(&ups[i].lock);
		buf_printf(b, "codeexecd_upstream_tools{upstream=\"%s\"} %ld\n", ups[i].cfg->name, n);
	}
}
