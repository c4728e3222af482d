/*
 * tools.h - the MCP tools: one file per tool, each exporting a table entry;
 * tools/list is generated from the table. Shared argument and result
 * helpers live in tools.c, those of the session tools in tools_session.c.
 */
#ifndef SUPERVISOR_TOOLS_H
#define SUPERVISOR_TOOLS_H

#include <stddef.h>

#include <json-c/json.h>

struct config;
struct session;
struct job;

/* What a tool handler gets, and how it reports a protocol-level error. */
struct tool_call {
	const struct config *cfg;
	struct session *session;	/* the caller's; borrowed, referenced */
	struct json_object *args;	/* borrowed; an object (maybe empty) */
	struct json_object *request_id; /* borrowed; the tools/call id */
	/*
	 * Set by the transport when the client asked for progress: sends one
	 * progress notification; -1 if the client is gone. Called unlocked.
	 */
	int (*progress)(void *io, double progress, const char *message);
	/*
	 * Set by the transport when the client can answer a kernel's input():
	 * asks it for one line, `prompt`, under JSON-RPC id `rpc_id`; its
	 * answer comes back through pool_input_answer(). -1 if the client is
	 * gone. Called unlocked.
	 */
	int (*elicit)(void *io, const char *rpc_id, const char *prompt);
	/*
	 * 2026-07-28's multi-round-trip form instead (the client declared
	 * elicitation): a prompt ends the call with an InputRequiredResult,
	 * the job goes on in the background with its kernel waiting, and the
	 * retry names it by request_state and answers it by input_key's
	 * ElicitResult, read into input_how and input_text (borrowed from
	 * the request). input_key NULL: the retry answered nothing.
	 */
	int input_required;
	const char *request_state;
	const char *input_key;
	int input_how;		/* enum input_answer */
	const char *input_text;
	/* Nonzero once the client has gone away. Called unlocked. */
	int (*client_gone)(void *io);
	/* The client's socket, for the main loop to watch (client_watch.h); -1:
	 * unknown. NULL: none. */
	int (*client_fd)(void *io);
	void *io;
	double arrived;		/* monotonic s: the request came */
	/* An execution's timings in ms, for the request's log line: set `timed`. */
	int timed;
	double queued_ms, kernel_ms;
	int no_response;	/* cancelled by the client: answer nothing */
	int tasks;		/* the client takes a task (tasks.h) for a backgrounded call */
	int new_session;	/* tool_session_or_new made the execution session it runs in */
	int error_code;		/* set with error_message to fail the request */
	char error_message[256];
};

/*
 * Another name a tool accepts for one of its arguments (seed 003's names,
 * so that its callers' arguments are never dropped). Giving both is allowed
 * only with equal values.
 */
struct tool_alias {
	const char *alias;
	const char *name;
};

struct tool {
	const char *name_format; /* "{name}" stands for the configured name */
	/*
	 * Add description, inputSchema and outputSchema to `tool`. The
	 * inputSchema's "properties" are the only arguments a call may give
	 * (tools_args); tools_list adds the aliases and additionalProperties.
	 */
	void (*describe)(const struct config *cfg, struct json_object *tool);
	/* NULL, or aliases ending with {NULL, NULL}. */
	const struct tool_alias *aliases;
	/*
	 * NULL, or whether `cfg` offers the tool now: an unlisted tool is
	 * missing from tools/list and unknown to tools/call.
	 */
	int (*listed)(const struct config *cfg);
	/*
	 * Run the tool. Returns a CallToolResult (caller owns), or NULL after
	 * setting error_code and error_message for a JSON-RPC error, or NULL
	 * with no_response set. Called with pool_lock() held.
	 */
	struct json_object *(*call)(struct tool_call *tc);
	/*
	 * It acts in the caller's session (its jobs, batches, files): its
	 * inputSchema gets an optional execution_session_id naming another
	 * of the caller's, which the 2026-07-28 path, with no MCP session,
	 * requires (mcp_call.c).
	 */
	int in_session;
	/*
	 * The argument, other than an in_session tool's execution_session_id,
	 * that names the kernel session the call acts on, or NULL. On the
	 * 2026-07-28 path that argument carries x-mcp-header "Session", and
	 * Mcp-Param-Session mirrors it (mcp_header.h).
	 */
	const char *session_arg;
};

extern const struct tool tool_execute;
extern const struct tool tool_check_job;
extern const struct tool tool_cancel_job;
extern const struct tool tool_list_sessions;
extern const struct tool tool_inspect_session;
extern const struct tool tool_close_session;
extern const struct tool tool_parallel_execute;
extern const struct tool tool_check_batch;
extern const struct tool tool_cancel_batch;
extern const struct tool tool_install_packages;
extern const struct tool tool_search_tools;
extern const struct tool tool_send;
extern const struct tool tool_upload_file;
extern const struct tool tool_checkpoint;
extern const struct tool tool_restore;
extern const struct tool tool_fork_session;

/*
 * The tools/list result's "tools" array; `modern` for the 2026-07-28 path,
 * where no MCP session keeps state: there the descriptions say how a
 * caller keeps its kernel, and execution_session_id is required where a
 * tool acts in a session. Caller owns.
 */
struct json_object *tools_list(const struct config *cfg, int modern);
/* How many tools the table holds; the index of `t` in it (-1: none); the
 * name of the i-th under `cfg`, into out[len]. For counting calls by tool. */
size_t tools_count(void);
int tools_index(const struct tool *t);
void tools_name(size_t i, const struct config *cfg, char *out, size_t len);
/* The argument of `t` that names a kernel session (see struct tool), or NULL. */
const char *tools_session_param(const struct tool *t);
/* The tool called `name`, or NULL. */
const struct tool *tools_find(const struct config *cfg, const char *name);

/*
 * The arguments of a call of `t` (`args`, borrowed, an object), checked
 * against its inputSchema: each must be one of its properties, and each
 * alias is given under the name it stands for. Caller owns the result
 * (values shared with `args`). NULL with a message naming the unknown
 * arguments and the accepted ones (or the alias that disagrees) in err.
 */
struct json_object *tools_args(const struct config *cfg, const struct tool *t,
			       struct json_object *args, char *err, size_t err_len);

/* Fail `tc` with JSON-RPC "invalid params"; returns NULL to return. */
struct json_object *tool_bad_params(struct tool_call *tc, const char *message);
/* Fail `tc` with JSON-RPC -32000, a request the server cannot carry out,
 * its message printf'd; returns NULL to return. */
struct json_object *tool_refuse(struct tool_call *tc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The string argument `key`, or NULL if absent, not a string or holding a NUL. */
const char *tool_arg_string(struct tool_call *tc, const char *key);
/*
 * The timeout argument in seconds: default_timeout when absent, clamped to
 * max_timeout. Returns -1 after tool_bad_params when it is not a positive
 * number (null and 0, seed 003's "unbounded", included: nothing runs
 * without a bound).
 */
double tool_arg_timeout(struct tool_call *tc);
/*
 * A CallToolResult with one text item (the JSON of `structured`, or `text`
 * if given) and structuredContent `structured` (consumed). Caller owns.
 */
struct json_object *tool_result(struct json_object *structured, const char *text, int is_error);
/* A refused or failed call: isError, with {error: {type, message}}. Caller owns. */
struct json_object *tool_error(const char *type, const char *message);
/* Append `line` to the first text item of CallToolResult `r`, on a line of its own. */
void tool_note(struct json_object *r, const char *line);
/*
 * The 2026-07-28 path's line naming the execution session `id` in the
 * text of `r` (what most clients hand their model, rather than
 * structuredContent), saying whether this call `created` it.
 */
void tool_note_session(struct json_object *r, const char *id, int created);
/* The answer about a job the caller may not see: like one that never existed. */
struct json_object *tool_job_not_found(const char *id);
/* A batch tool's description, `text`, and its inputSchema: a required batch_id. */
void tool_batch_describe(struct json_object *tool, const char *text);
/*
 * A batch tool's call: `answer` (batch_report or batch_cancel) for the
 * batch named by the `batch_id` argument and the caller's session; a batch
 * it may not see (answer gives NULL) is answered like one that never
 * existed. Caller owns.
 */
struct json_object *tool_batch_call(struct tool_call *tc,
				    struct json_object *(*answer)(const char *id,
								  const char *owner));
/* An inputSchema/outputSchema from its JSON text. Caller owns. */
struct json_object *tool_schema(const char *json);
/*
 * The session a call addresses: the caller's own, or the one named by its
 * argument `arg` (execution_session_id, session_id) when the caller may use
 * it. Referenced; NULL after tool_bad_params ("unknown ARG") when unknown
 * or foreign.
 */
struct session *tool_session_arg(struct tool_call *tc, const char *arg);
/*
 * tool_session_arg, except that a caller with no MCP session (the
 * 2026-07-28 path: tc->session is transient) that names none gets a new
 * execution session, bound to its identity. Referenced; NULL with the
 * call's error set (unknown id, or pool.max_sessions reached).
 */
struct session *tool_session_or_new(struct tool_call *tc, const char *arg);

/*
 * preprocess_command's version of `code` for a run in session `s` (its id
 * and identity go to the command) into *out (owned; NULL when none is set).
 * pool_lock is released while the command runs. 0, or -1 with *failed, the
 * call's answer (PreprocessError: the command's stderr, or that it timed
 * out or wrote too much). tool_execute.c.
 */
int tool_preprocess(struct tool_call *tc, struct session *s, const char *code, char **out,
		    struct json_object **failed);

/*
 * The working directory of session `s` (caller owns), giving it its kernel
 * first if it has none yet (a silent, empty execution). NULL on failure,
 * with *result set to the failed execution's result (caller owns).
 */
char *tool_session_workdir(struct tool_call *tc, struct session *s, struct json_object **result);
/*
 * Run the checkpoint cell for `op` ("save": arg a label or NULL; "load":
 * an id or NULL) in session s (referenced by the caller), giving it its
 * kernel first: what the cell answered (caller owns), or NULL with *r the
 * call's failed result (caller owns). tool_checkpoint.c.
 */
struct json_object *tool_checkpoint_cell(struct tool_call *tc, struct session *s, const char *op,
					 const char *arg, struct json_object **r);
/* The optional `label` argument, or NULL; *bad after tool_bad_params. */
const char *tool_label_arg(struct tool_call *tc, int *bad);
/* inputSchema of the session tools: an optional session_id. */
extern const char tool_session_id_schema[];
/*
 * Id, times, state and working directory of `s`, with its size as last
 * counted (tool_refresh_usage). Caller owns.
 */
struct json_object *tool_session_summary(const struct session *s);
/*
 * Count again the working directories of the sessions in list[n] (each
 * referenced by the caller) whose count is stale. pool_lock is held on entry
 * and exit, and released while counting.
 */
void tool_refresh_usage(struct session **list, size_t n);

#endif
