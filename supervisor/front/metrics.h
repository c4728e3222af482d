/*
 * metrics.h - the daemon's counters, and /metrics: their rendering in the
 * Prometheus text exposition format (version 0.0.4).
 *
 * Owns every counter and histogram. Callers bump them where the events
 * already happen; each bump is one relaxed C11 atomic add, so it costs
 * nothing worth measuring and needs no lock: any thread may call any
 * function here, holding any lock or none. Rendering takes no lock either
 * (the caller reads the gauges from the atomics session.h and pool_state.h
 * keep for /health), so /metrics answers while everything else is slow.
 * Counters read while they move may be a call apart from each other; each
 * is exact. It depends on no other module of the supervisor, so that the
 * unit tests of those that bump it link it as it is.
 */
#ifndef SUPERVISOR_METRICS_H
#define SUPERVISOR_METRICS_H

#include <stdint.h>

struct json_object;

/* Room for the tools' names; calls of others count as tool "unknown". */
#define METRICS_TOOLS_MAX 16

/* Plain counters, each one metric without labels. */
enum metrics_counter {
	METRICS_KERNEL_STARTS,	 /* a kernel came up (every READY) */
	METRICS_KERNEL_RESTARTS, /* ...in a worker whose kernel had come up before */
	METRICS_OOM_KILLS,	 /* a kernel ended by its memory limit */
	METRICS_TIMEOUTS,	 /* execute calls that ended as timed_out */
	METRICS_CANCELS,	 /* execute calls that ended as cancelled */
	METRICS_SPILL_FILES,	 /* outputs saved to a file beyond the result */
	METRICS_MISDIRECTED,	 /* requests naming another node's handle (handle.h) */
	METRICS_COUNTER_N,
};

/* How a tools/call ended, the `outcome` label of codeexecd_calls_total. */
enum metrics_outcome {
	METRICS_OK,	    /* answered, isError false */
	METRICS_ERROR,	    /* answered with isError: the code raised, or a failure */
	METRICS_TIMEOUT,    /* answered with error TimeoutError */
	METRICS_CANCELLED,  /* cancelled by the client, or answered Cancelled */
	METRICS_BACKGROUND, /* answered with a job to poll */
	METRICS_REJECTED,   /* a JSON-RPC error: bad arguments, unknown session */
	METRICS_ABANDONED,  /* the client left before it started */
	METRICS_OUTCOME_N,
};

/* The latency histograms of execute calls, in seconds. */
enum metrics_histogram {
	METRICS_QUEUED, /* arrival to the code being sent to the worker */
	METRICS_KERNEL, /* sent to the result */
	METRICS_TOTAL,	/* arrival to the result */
	METRICS_HISTOGRAM_N,
};

/* Why a kernel or its worker ended unasked, the `cause` label. */
enum metrics_death {
	METRICS_DEATH_CRASH,	 /* the kernel exited or was killed by a signal */
	METRICS_DEATH_OOM,	 /* its memory limit's OOM killer ended it */
	METRICS_DEATH_RESTART,	 /* restarted on request (a stubborn cancel) */
	METRICS_DEATH_WORKER,	 /* its worker died under it */
	METRICS_DEATH_N,
};

/* Why a session was closed for another's sake or unused, the `reason` label. */
enum metrics_reclaim {
	METRICS_RECLAIM_SHARE,	/* its identity held pool.max_sessions_per_identity */
	METRICS_RECLAIM_POOL,	/* the pool was full (pool.max_sessions) */
	METRICS_RECLAIM_UNUSED, /* named by no call after its first (session_idle_timeout_unused) */
	METRICS_RECLAIM_N,
};

/* What /metrics reports as gauges, read by the caller without locks. */
struct metrics_gauges {
	int sessions;	  /* open */
	int busy;	  /* of them, running a call */
	int idle;	  /* pool: kernels ready for a new session */
	int starting;	  /* pool: kernels starting */
	int queued;	  /* pool: calls waiting in its queue for a kernel */
	int warm;	  /* pool.warm */
	int max_sessions; /* pool.max_sessions */
	/* sidecar_view_json()'s array (borrowed), or NULL: names are label-safe */
	struct json_object *sidecars;
};

/* The name of tool number i (tools.h's index), copied; i < METRICS_TOOLS_MAX.
 * Once per tool, before serving. */
void metrics_tool_name(int i, const char *name);

void metrics_add(enum metrics_counter c, uint64_t n);
/* Have `render` append a module's metrics to every page (code mode's, egress's), at start-up. */
struct buf;
void metrics_add_renderer(void (*render)(struct buf *));
/* A tools/call of tool number `tool` (-1: unknown) ended with `o`. */
void metrics_call(int tool, enum metrics_outcome o);
/* The outcome an answered CallToolResult `result` (borrowed) stands for. */
enum metrics_outcome metrics_outcome_of(struct json_object *result);
void metrics_observe(enum metrics_histogram h, double seconds);
/* An HTTP response with `status` was sent. */
void metrics_http_status(int status);
/* A session was closed for `why`. */
void metrics_session_reclaimed(enum metrics_reclaim why);
/* A kernel died without being asked to stop. */
void metrics_kernel_death(enum metrics_death cause);
/*
 * A worker process ended that was not asked to: `killed` by the supervisor
 * (a protocol violation, a hang), or else on its own (`signaled` or exit).
 */
void metrics_worker_death(int killed, int signaled);
/*
 * An execution's result (borrowed) arrived: count its output bytes and
 * the kernel deaths its error reports.
 */
void metrics_result(struct json_object *result);

/* The exposition text, with gauges `g` (borrowed). Takes no lock. Caller owns. */
char *metrics_render(const struct metrics_gauges *g);

#endif
