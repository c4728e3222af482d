/* metrics.c - see metrics.h. */
#include "autoconf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "log.h"
#include "metrics.h"
/* HTTP status codes counted one by one: 100 to 599. */
#define STATUS_FIRST 100
#define STATUS_N 500

/* Upper bounds of the latency buckets, in seconds; +Inf follows. */
/* Modules' own metrics (metrics_add_renderer), after the daemon's. */
#define RENDERERS_MAX 4
static void (*extra_render[RENDERERS_MAX])(struct buf *);
static size_t n_extra;

void
metrics_add_renderer(void (*render)(struct buf *))
{
	if (n_extra == RENDERERS_MAX)
		fatalx("metrics: more than %d modules' renderers", RENDERERS_MAX);
	extra_render[n_extra++] = render;
}

static const double bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				0.5,   1,      2.5,   5,    10,	   30,	 60,  300};
#define BUCKET_N (sizeof(bounds) / sizeof(bounds[0]) + 1)

/* One histogram: per-bucket (not cumulative) counts, and the sum in ns. */
struct histogram {
	atomic_ullong bucket[BUCKET_N];
	atomic_ullong sum_ns;
};

/* Written before serving, read-only after. "": no tool of that number. */
static char tool_names[METRICS_TOOLS_MAX][128];

static atomic_ullong counters[METRICS_COUNTER_N];
static atomic_ullong calls[METRICS_TOOLS_MAX + 1][METRICS_OUTCOME_N]; /* last: unknown */
static struct histogram histograms[METRICS_HISTOGRAM_N];
static atomic_ullong http_status[STATUS_N];
static atomic_ullong http_status_other;
static atomic_ullong kernel_deaths[METRICS_DEATH_N];
static atomic_ullong worker_deaths[3]; /* killed, signaled, exited */
static atomic_ullong output_bytes[3];  /* stdout, stderr, rich */
static atomic_ullong reclaimed[METRICS_RECLAIM_N];

static const char *const outcome_names[METRICS_OUTCOME_N] = {
	[METRICS_OK] = "ok",		   [METRICS_ERROR] = "error",
	[METRICS_TIMEOUT] = "timeout",	   [METRICS_CANCELLED] = "cancelled",
	[METRICS_BACKGROUND] = "background", [METRICS_REJECTED] = "rejected",
	[METRICS_ABANDONED] = "abandoned",
};
static const char *const death_names[METRICS_DEATH_N] = {
	[METRICS_DEATH_CRASH] = "crash",
	[METRICS_DEATH_OOM] = "oom",
	[METRICS_DEATH_RESTART] = "restart",
	[METRICS_DEATH_WORKER] = "worker",
};
static const char *const reclaim_names[METRICS_RECLAIM_N] = {
	[METRICS_RECLAIM_SHARE] = "identity_share",
	[METRICS_RECLAIM_POOL] = "pool_full",
	[METRICS_RECLAIM_UNUSED] = "unused",
};
static const char *const worker_death_names[3] = {"killed", "signal", "exit"};
static const char *const stream_names[3] = {"stdout", "stderr", "rich"};

/* Counters only count: nothing else is ordered by them. */
static void
bump(atomic_ullong *a, unsigned long long n)
{
	atomic_fetch_add_explicit(a, n, memory_order_relaxed);
}

static unsigned long long
get(atomic_ullong *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

void
metrics_tool_name(int i, const char *name)
{
	if (i >= 0 && i < METRICS_TOOLS_MAX)
		snprintf(tool_names[i], sizeof(tool_names[i]), "%s", name);
}

void
metrics_add(enum metrics_counter c, uint64_t n)
{
	bump(&counters[c], n);
}

void
metrics_call(int tool, enum metrics_outcome o)
{
	int known = tool >= 0 && tool < METRICS_TOOLS_MAX && tool_names[tool][0];
	bump(&calls[known ? tool : METRICS_TOOLS_MAX][o], 1);
}

/* error.type of a result or structuredContent `o`, or "". */
static const char *
error_type(struct json_object *o)
{
	struct json_object *err, *type;

	if (json_object_object_get_ex(o, "error", &err) &&
	    json_object_object_get_ex(err, "type", &type) &&
	    json_object_is_type(type, json_type_string))
		return json_object_get_string(type);
	return "";
}

enum metrics_outcome
metrics_outcome_of(struct json_object *result)
{
	struct json_object *sc = NULL, *is_error;

	json_object_object_get_ex(result, "structuredContent", &sc);
	if (sc && json_object_object_get_ex(sc, "poll_tool", NULL))
		return METRICS_BACKGROUND;
	const char *type = sc ? error_type(sc) : "";
	if (strcmp(type, "TimeoutError") == 0)
		return METRICS_TIMEOUT;
	if (strcmp(type, "Cancelled") == 0)
		return METRICS_CANCELLED;
	if (json_object_object_get_ex(result, "isError", &is_error) &&
	    json_object_get_boolean(is_error))
		return METRICS_ERROR;
	return METRICS_OK;
}

void
metrics_observe(enum metrics_histogram h, double seconds)
{
	size_t b = 0;

	if (seconds < 0)
		seconds = 0;
	while (b < BUCKET_N - 1 && seconds > bounds[b])
		b++;
	bump(&histograms[h].bucket[b], 1);
	bump(&histograms[h].sum_ns, (unsigned long long)(seconds * 1e9));
}

void
metrics_http_status(int status)
{
	if (status >= STATUS_FIRST && status < STATUS_FIRST + STATUS_N)
		bump(&http_status[status - STATUS_FIRST], 1);
	else
		bump(&http_status_other, 1);
}

void
metrics_session_reclaimed(enum metrics_reclaim why)
{
	bump(&reclaimed[why], 1);
}

void
metrics_kernel_death(enum metrics_death cause)
{
	bump(&kernel_deaths[cause], 1);
	if (cause == METRICS_DEATH_OOM)
		bump(&counters[METRICS_OOM_KILLS], 1);
}

void
metrics_worker_death(int killed, int signaled)
{
	bump(&worker_deaths[killed ? 0 : signaled ? 1 : 2], 1);
}

/* Length of member `key` of `o` when it is a string, else 0. */
static size_t
string_len(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return (size_t)json_object_get_string_len(v);
	return 0;
}

void
metrics_result(struct json_object *result)
{
	struct json_object *rich;
	size_t rich_bytes = 0;

	bump(&output_bytes[0], string_len(result, "stdout"));
	bump(&output_bytes[1], string_len(result, "stderr"));
	if (json_object_object_get_ex(result, "rich_outputs", &rich) &&
	    json_object_is_type(rich, json_type_array))
		for (size_t i = 0; i < json_object_array_length(rich); i++)
			rich_bytes += string_len(json_object_array_get_idx(rich, i), "data");
	bump(&output_bytes[2], rich_bytes);

	const char *type = error_type(result);
	struct json_object *err = json_object_object_get(result, "error");
	const char *msg = err ? json_object_get_string(json_object_object_get(err, "message"))
			      : NULL;
	if (strcmp(type, "MemoryLimitExceeded") == 0)
		metrics_kernel_death(METRICS_DEATH_OOM);
	else if (strcmp(type, "WorkerDied") == 0)
		metrics_kernel_death(METRICS_DEATH_WORKER);
	else if (strcmp(type, "KernelDied") == 0)
		metrics_kernel_death(msg && strstr(msg, "restarted on request")
					     ? METRICS_DEATH_RESTART
					     : METRICS_DEATH_CRASH);
}

/* The # HELP and # TYPE lines of metric `name`. */
static void
header(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP codeexecd_%s %s\n# TYPE codeexecd_%s %s\n", name, help, name, type);
}

static void
render_histogram(struct buf *b, const char *name, const char *help, struct histogram *h)
{
	unsigned long long cumulative = 0;

	header(b, name, "histogram", help);
	for (size_t i = 0; i < BUCKET_N; i++) {
		cumulative += get(&h->bucket[i]);
		if (i < BUCKET_N - 1)
			buf_printf(b, "codeexecd_%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
				   cumulative);
		else
			buf_printf(b, "codeexecd_%s_bucket{le=\"+Inf\"} %llu\n", name, cumulative);
	}
	buf_printf(b, "codeexecd_%s_sum %.9f\n", name, (double)get(&h->sum_ns) / 1e9);
	buf_printf(b, "codeexecd_%s_count %llu\n", name, cumulative);
}

static void
render_counter(struct buf *b, const char *name, const char *help, enum metrics_counter c)
{
	header(b, name, "counter", help);
	buf_printf(b, "codeexecd_%s %llu\n", name, get(&counters[c]));
}

/* Sessions and the pool. */
static void
render_gauges(struct buf *b, const struct metrics_gauges *g)
{
	int busy = g->busy < g->sessions ? g->busy : g->sessions;

	/* (A closed session's last call may still be ending: busy <= open.) */
	header(b, "sessions", "gauge", "MCP sessions open, by whether a call of theirs runs.");
	buf_printf(b, "codeexecd_sessions{state=\"idle\"} %d\n", g->sessions - busy);
	buf_printf(b, "codeexecd_sessions{state=\"busy\"} %d\n", busy);
	header(b, "pool_kernels", "gauge", "Kernels not yet held by a session, by state.");
	buf_printf(b, "codeexecd_pool_kernels{state=\"idle\"} %d\n", g->idle);
	buf_printf(b, "codeexecd_pool_kernels{state=\"starting\"} %d\n", g->starting);
	header(b, "pool_queue_length", "gauge",
	       "Calls waiting in the pool's queue for a kernel, served in arrival order.");
	buf_printf(b, "codeexecd_pool_queue_length %d\n", g->queued);
	header(b, "pool_warm", "gauge", "Idle kernels the pool keeps started (pool.warm).");
	buf_printf(b, "codeexecd_pool_warm %d\n", g->warm);
	header(b, "pool_max_sessions", "gauge",
	       "Most sessions with a kernel at once (pool.max_sessions).");
	buf_printf(b, "codeexecd_pool_max_sessions %d\n", g->max_sessions);
	header(b, "sessions_reclaimed_total", "counter",
	       "Idle sessions closed to make room for their identity's new one, or unused.");
	for (size_t i = 0; i < METRICS_RECLAIM_N; i++)
		buf_printf(b, "codeexecd_sessions_reclaimed_total{reason=\"%s\"} %llu\n",
			   reclaim_names[i], get(&reclaimed[i]));
}

static void
render_calls(struct buf *b)
{
	header(b, "calls_total", "counter", "MCP tools/call requests, by tool and outcome.");
	for (size_t t = 0; t <= METRICS_TOOLS_MAX; t++) {
		int known = t < METRICS_TOOLS_MAX;
		if (known && tool_names[t][0] == '\0')
			continue;
		for (size_t o = 0; o < METRICS_OUTCOME_N; o++) {
			unsigned long long n = get(&calls[t][o]);
			/* Unknown tools appear only once called. */
			if (!known && n == 0)
				continue;
			buf_printf(b, "codeexecd_calls_total{tool=\"%s\",outcome=\"%s\"} %llu\n",
				   known ? tool_names[t] : "unknown", outcome_names[o], n);
		}
	}
	render_histogram(b, "call_queued_seconds",
			 "Execute calls: from arrival until the code was sent to the kernel.",
			 &histograms[METRICS_QUEUED]);
	render_histogram(b, "call_kernel_seconds",
			 "Execute calls: from sending the code until its result came back.",
			 &histograms[METRICS_KERNEL]);
	render_histogram(b, "call_seconds", "Execute calls: from arrival until the result.",
			 &histograms[METRICS_TOTAL]);
	render_counter(b, "timeouts_total", "Execute calls that ended by their timeout.",
		       METRICS_TIMEOUTS);
	render_counter(b, "cancels_total", "Execute calls that ended cancelled.",
		       METRICS_CANCELS);
}

static void
render_kernels(struct buf *b)
{
	render_counter(b, "kernel_starts_total", "Kernels that came up.", METRICS_KERNEL_STARTS);
	render_counter(b, "kernel_restarts_total",
		       "Kernels that came up in place of an earlier one of the same worker.",
		       METRICS_KERNEL_RESTARTS);
	header(b, "kernel_deaths_total", "counter",
	       "Kernels that ended without being asked to stop, by cause.");
	for (size_t i = 0; i < METRICS_DEATH_N; i++)
		buf_printf(b, "codeexecd_kernel_deaths_total{cause=\"%s\"} %llu\n", death_names[i],
			   get(&kernel_deaths[i]));
	render_counter(b, "oom_kills_total", "Kernels ended by their memory limit.",
		       METRICS_OOM_KILLS);
	header(b, "worker_deaths_total", "counter",
	       "Worker processes that ended without being asked to, by cause.");
	for (size_t i = 0; i < 3; i++)
		buf_printf(b, "codeexecd_worker_deaths_total{cause=\"%s\"} %llu\n",
			   worker_death_names[i], get(&worker_deaths[i]));
	header(b, "output_bytes_total", "counter", "Bytes of output in results, by stream.");
	for (size_t i = 0; i < 3; i++)
		buf_printf(b, "codeexecd_output_bytes_total{stream=\"%s\"} %llu\n",
			   stream_names[i], get(&output_bytes[i]));
	render_counter(b, "spill_files_total",
		       "Outputs too large for a result, saved to a file instead.",
		       METRICS_SPILL_FILES);
	render_counter(b, "misdirected_requests_total",
		       "Requests naming another node's handle, answered 421 naming that node.",
		       METRICS_MISDIRECTED);
}

static void
render_http(struct buf *b)
{
	header(b, "http_responses_total", "counter", "HTTP responses sent, by status code.");
	for (int i = 0; i < STATUS_N; i++) {
		unsigned long long n = get(&http_status[i]);
		if (n)
			buf_printf(b, "codeexecd_http_responses_total{code=\"%d\"} %llu\n",
				   i + STATUS_FIRST, n);
	}
	if (get(&http_status_other))
		buf_printf(b, "codeexecd_http_responses_total{code=\"other\"} %llu\n",
			   get(&http_status_other));
}

/* Member `key` of sidecar object o, as an integer. */
static long long
sidecar_int(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) ? (long long)json_object_get_int64(v) : 0;
}

/* Each sidecar's state, restarts and memory, from what the parent said. */
static void
render_sidecars(struct buf *b, struct json_object *sidecars)
{
	size_t n = sidecars ? json_object_array_length(sidecars) : 0;

	if (n == 0)
		return;
	header(b, "sidecar_up", "gauge", "1 while the sidecar runs (its state is in /health).");
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(sidecars, i);
		const char *state = json_object_get_string(json_object_object_get(o, "state"));
		buf_printf(b, "codeexecd_sidecar_up{sidecar=\"%s\"} %d\n",
			   json_object_get_string(json_object_object_get(o, "name")),
			   strcmp(state, "running") == 0);
	}
	header(b, "sidecar_restarts_total", "counter", "Times the sidecar was started again.");
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(sidecars, i);
		buf_printf(b, "codeexecd_sidecar_restarts_total{sidecar=\"%s\"} %lld\n",
			   json_object_get_string(json_object_object_get(o, "name")),
			   sidecar_int(o, "restarts"));
	}
	header(b, "sidecar_resident_bytes", "gauge", "The sidecar process's resident memory.");
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(sidecars, i);
		buf_printf(b, "codeexecd_sidecar_resident_bytes{sidecar=\"%s\"} %lld\n",
			   json_object_get_string(json_object_object_get(o, "name")),
			   sidecar_int(o, "rss_kb") * 1024);
	}
}

char *
metrics_render(const struct metrics_gauges *g)
{
	struct buf b;

	buf_init(&b);
	render_gauges(&b, g);
	render_calls(&b);
	render_kernels(&b);
	for (size_t i = 0; i < n_extra; i++)
		extra_render[i](&b);
	render_http(&b);
	render_sidecars(&b, g->sidecars);
	return buf_release(&b);
}
