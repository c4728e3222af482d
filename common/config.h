/*
 * config.h - the daemon's configuration: one YAML file, parsed with libyaml.
 *
 * Owns struct config and its key table. Each key is declared once in
 * config_keys.c (name, type, default, one-line documentation); the parser, the
 * sample etc/codeexecd.yaml and codeexecd.yaml(5) all follow that table, and
 * tests/unit/test_config checks that they agree.
 */
#ifndef COMMON_CONFIG_H
#define COMMON_CONFIG_H

#include <stddef.h>

#include "landlock.h"
#include "netmode.h"
#include "sidecar_config.h"
#include "strlist.h"
#include "tooldef.h"

struct ynode;

enum env_type {
	ENV_PIP,
	ENV_UV,
	ENV_CONDA,
};

enum exec_mode {
	EXEC_SYNC,
	EXEC_ASYNC_ONLY,
	EXEC_ADAPTIVE,
};

/* How callers are authenticated (auth.mode). */
enum auth_mode {
	AUTH_NONE,
	AUTH_OAUTH,
	AUTH_TOKENS,
};

/* structured_binary: how structuredContent carries binary rich outputs. */
enum structured_binary {
	STRUCTURED_INLINE,
	STRUCTURED_REFERENCE,
};

/* What the privileged parent does when the front dies (front_restart). */
enum front_restart {
	FRONT_RESTART,
	FRONT_EXIT,
};

/* How a kernel process comes to be (pool.start). */
enum pool_start {
	POOL_START_EXEC,     /* fork and exec the environment's Python */
	POOL_START_TEMPLATE, /* fork of a pre-imported template (issue 33; not built: exec) */
};

/* What search_{name}_tools ranks with (tool_search_backend). */
enum tool_backend {
	TOOL_BACKEND_BM25,
	TOOL_BACKEND_AZURE, /* azure_ai_search */
};

/* Where a kernel keeps its IPython history (kernel_history). */
enum kernel_history {
	HISTORY_MEMORY,
	HISTORY_NONE,
	HISTORY_DISK,
};

/* A list of mappings read into records of one type (see CFG_RECORDS). */
struct config_records {
	void *v;	/* n records, each of the key's record_size */
	size_t n;
};

/* One entry of `assets` (seed 000, "Assets"). */
struct config_asset {
	char *name;
	char *source;	   /* https://, http:// to loopback, file:// or an absolute path */
	char *destination; /* relative to asset_cache_dir */
	char *checksum;	   /* sha256, 64 hex digits, maybe after "sha256:" */
	int size_hint_mb;  /* 0: unknown */
};

struct config {
	char *file; /* path it was read from */

	/* identity (seed 000) */
	char *name;
	char *description;
	char *server_description;
	char *node_name; /* "" or at most CONFIG_NODE_NAME_MAX of NAME_CHARS: the handles' tag */

	/* environment (seed 000) */
	enum env_type type;
	char *dependency_file;	 /* content, not a path */
	int auto_build;
	char *build_dir;	 /* "~" and "{name}" expanded */
	char *python;		 /* base interpreter of a pip venv */
	int system_site_packages;
	struct strlist additional_commands;
	struct strmap kernel_environment;
	char *asset_cache_dir;	 /* expanded; "" in the file means the parent of build_dir */
	int build_timeout_s;	 /* whole build, every step included */
	char *conda_executable;	 /* "": the first of micromamba, mamba, conda found */
	char *wheelhouse;	 /* "" or absolute: per-session installs with no index */
	/* the kernel (kernelspec.h): resolved once the file is read */
	char *kernel;		 /* a kernelspec name; "ipykernel": the environment's */
	struct strlist kernel_argv; /* given, or the kernelspec's; empty for ipykernel */
	char *kernel_language;	 /* given, or the kernelspec's; "python" for ipykernel */
	int kernel_argv_given;	 /* kernel_argv came from the file */
	int kernel_after_build;	 /* kernelspec_settle looks for `kernel` once the environment is built */
	int kernel_interrupt_message; /* the kernelspec's interrupt_mode is "message" */

	/* sidecars (seed 000's SidecarConfig, issue 14) */
	struct config_sidecars sidecars;

	/* assets (seed 000) */
	struct config_records assets; /* of struct config_asset */
	struct config_records publishers; /* of struct config_publisher */
	struct config_records upstreams;  /* of struct config_upstream */
	int resource_max_bytes;	      /* resources/read gives at most this */
	int max_upload_bytes;	      /* NAME_upload_file takes at most this; 0: no tool */
	int files_extension;	      /* data_uri is an x-mcp-file input (SEP-2356's draft) */
	int auto_provision;
	int asset_timeout_s;
	int asset_max_mb;

	/* execution (seed 000) */
	double default_timeout;
	double max_timeout;
	enum exec_mode execution_mode;
	double promotion_threshold_s;
	int output_truncation_threshold; /* characters */
	int rich_output_max_bytes;
	int inline_output_max_bytes;	 /* past it, a rich output by reference; 0: never */
	enum structured_binary structured_binary;
	struct strlist allow_mime;	 /* rich output types kept; text/plain always is */
	char *matplotlib_backend;	 /* MPLBACKEND of kernels; "none": left alone */
	int parallel_max_concurrency;	 /* 0: bounded by the pool only */
	int parallel_max_inputs;	 /* inputs of one batch, at most */
	double progress_interval_s;
	long checkpoint_max_bytes;    /* checkpoint.max_bytes */
	double checkpoint_max_seconds; /* checkpoint.max_seconds */
	double checkpoint_interval_s;  /* checkpoint.interval_s */
	long fork_max_bytes;	       /* a fork's copy of the working directory; 0: no forks */
	int job_retention_s;
	int session_idle_timeout;	 /* seconds; 0: never */
	int session_hibernate_after;	 /* seconds; 0: never */
	int session_retention;		 /* seconds a hibernated session stays; 0: forever */
	int max_hibernated_sessions;
	int persist_sessions;		 /* sessions outlive a restart (session_journal.h) */
	int session_idle_timeout_unused; /* of a stateless session named once; 0: the above */

	/* daemon */
	char *listen_host;	 /* from `listen: host:port` */
	int listen_port;	 /* 0: any free port */
	char *metrics_listen_host; /* from `metrics_listen`; NULL: /metrics on `listen` */
	int metrics_listen_port;
	int allow_external_network_boundary;
	struct strlist allowed_origins;
	long max_request_bytes;
	char *state_dir;
	char *runtime_dir;
	int pool_warm;
	struct strlist pool_preload;
	int pool_max_starting;
	int pool_warm_max;
	enum pool_start pool_start;
	int pool_max_sessions;
	int pool_max_sessions_per_identity; /* 0: config_identity_share's default */
	/* the HTTP front (supervisor/front/http.c) */
	int http_threads;		 /* 0: sized from pool.max_sessions */
	int http_keep_alive_s;
	int http_header_timeout_s;
	int http_max_streams_per_session;
	int http_max_calls_per_session;	 /* http.max_concurrent_calls_per_session */
	int http_max_connections_per_client; /* 0: half of the threads */
	int http_linger_s;		 /* reading on after an early 413; 0: none */
	long http_linger_bytes;
	char *log_facility;
	int shutdown_grace_s;
	enum front_restart front_restart;

	/* isolation and limits */
	enum net_mode kernel_network_mode;
	unsigned kernel_uid_first;	 /* kernel_uid_range START-END; 0: none */
	unsigned kernel_uid_last;
	int limit_memory_mb;		 /* 0: none */
	int limit_pids;
	double limit_cpu;		 /* share of one core */
	int limit_nofile;
	/* egress (issue 36): what isolated kernels reach through the proxy */
	struct strlist egress_allow;	 /* egress_rules.h's rules */
	struct strlist egress_deny;
	char *egress_hosts_file;	 /* /etc/hosts format, before DNS; "": none */
	int egress_max_bytes;		 /* per session, both ways; 0: no limit */
	int egress_max_connections;	 /* per session, at once */
	struct config_records egress_inject; /* of struct config_egress_inject */
	char *egress_upstream_ca_file;	 /* more CAs intercepted upstreams may use; "": none */
	int limit_fsize_mb;
	int limits_required;		 /* refuse to start if one cannot be enforced */
	char *user;			 /* run as this user when started as root */
	char *group;
	char *control_group;		 /* may use the control socket; "": none */
	enum kernel_history kernel_history;
	enum landlock_use kernel_landlock;
	int landlock_abi;		 /* what kernels are confined at (landlock_resolve); 0: not */

	/* authentication (supervisor/front/auth*.c, common/auth_config.c) */
	char *entra_client_id;		 /* seed 000's Entra preset; "": none */
	char *entra_tenant_id;
	enum auth_mode auth_mode;
	char *auth_resource;		 /* URL of /mcp as clients reach it; "": derived */
	char *auth_issuer;		 /* exact `iss` */
	struct strlist auth_audience;	 /* `aud` must hold one; empty: auth_resource */
	char *auth_jwks_uri;		 /* "": discovered from the issuer */
	struct strlist auth_required_scopes;
	struct strlist auth_allowed_algorithms;
	int auth_clock_skew_s;
	char *auth_identity_claim;	 /* "": sub, or oid with the Entra preset */
	struct strlist auth_authorization_servers; /* empty: the issuer */
	char *auth_ca_file;		 /* "": the system's CA store */
	char *auth_tokens_file;		 /* mode tokens: "identity: sha256hex" lines */
	/* domain tools (issue 15; seed 000's ToolRegistry and preprocess_code) */
	struct tooldefs tools;		 /* `tools:` and every file of tools_dir */
	char *tools_dir;		 /* "" or absolute */
	enum tool_backend tool_search_backend;
	char *azure_endpoint;		 /* azure_ai_search.*: for TOOL_BACKEND_AZURE */
	char *azure_index;
	char *azure_api_key_file;
	char *azure_api_version;
	int azure_timeout_s;
	char *code_prefix;		 /* run once per kernel start; "" for none */
	char *preprocess_command;	 /* executable run on each execution's code; "" for none */
	int preprocess_timeout_s;
	int preprocess_max_bytes;	 /* of its stdout, and of its stderr */
};

/* matplotlib_backend's default (seed 003's) and the value that sets none. */
/* The longest node_name: the handles it tags stay short enough for any header. */
#define CONFIG_NODE_NAME_MAX 32
#define CONFIG_MPL_INLINE "module://matplotlib_inline.backend_inline"
#define CONFIG_MPL_NONE "none"

/* One entry of `publishers` (seed 000, "Publishers"; issue 16). */
struct config_publisher {
	char *name;
	char *type;		/* "local" or "azure_blob" */
	char *base_dir;		/* local: absolute */
	char *account_url;	/* azure_blob: https://ACCOUNT.blob.core.windows.net */
	char *container;	/* azure_blob */
	char *sas_token_file;	/* azure_blob: one credential of these three */
	char *account_key_file;
	int managed_identity;
	int max_bytes;		/* bytes of one artifact */
	char *prefix;		/* with {identity}, {session}, {date} */
	int auto_publish;	/* publish each result's artifacts */
	int on_close;		/* publish outputs/ when the session ends */
	char *content_type;	/* empty: guessed (mime.h) */
};

/* One entry of `upstreams` (code mode, issue 35): an MCP server whose tools
 * kernels call as Python functions, through the front. */
struct config_upstream {
	char *name;		  /* the module: codeexec_upstreams.NAME */
	char *url;		  /* streamable HTTP: https://, or http:// to loopback */
	char *token_file;	  /* a bearer token the parent reads; "": none */
	struct strlist tools;	  /* exposed tools; empty: all */
	struct strlist allow;	  /* identities that may call; empty: every one */
	struct strlist approve;	  /* tools whose calls the agent's client approves */
	struct strlist secret_args; /* argument names the log never shows */
	double timeout_s;	  /* one call */
	int max_response_bytes;	  /* of one answer */
	int max_calls;		  /* per session */
	int max_calls_per_minute; /* per session, a token bucket; 0: no bound */
	int required;		  /* unreachable at start: the daemon does not start */
};

/* One entry of `egress.inject` (issue 36): a header the egress proxy adds
 * to every request to `host`, which it intercepts (TLS ended by its CA). */
struct config_egress_inject {
	char *host;		/* NAME or *.SUFFIX, optional :PORT (egress_rules.h) */
	char *header;		/* the header's name, an RFC 9110 token */
	char *secret_file;	/* its value: the first line, read by the parent */
};

/* What a key holds, for the table and the documentation checks. */
enum config_kind {
	CFG_STRING,
	CFG_BOOL,
	CFG_INT,
	CFG_NUMBER,
	CFG_ENUM,
	CFG_LIST,   /* sequence of strings */
	CFG_MAP,    /* mapping of string to string */
	CFG_RECORDS, /* sequence of mappings, each read by the key's `fields` */
	CFG_NODE,    /* any YAML value, read by the key's `node` function */
};

/*
 * What a SIGHUP does with a changed key. Privilege separation rests on it:
 * the front moves into the running daemon exactly the RELOAD_LIVE keys
 * (config_swap_live), the parent re-reads only `sidecars`, and every other
 * change is logged and waits for a restart.
 */
enum reload_scope {
	RELOAD_NONE,	 /* not set: the table's test refuses it */
	RELOAD_LIVE,	 /* moved into the running front at once */
	RELOAD_SIDECARS, /* the parent restarts each sidecar it changes */
	RELOAD_RESTART,	 /* kept as it runs until the daemon restarts */
};

/* Validates (and, for keys without a field, stores) one string value. */
typedef int (*config_check_fn)(struct config *c, const char *value, char *why, size_t why_len);

struct config_key {
	const char *name;	/* dotted for nested keys: "pool.warm" */
	enum config_kind kind;
	const char *def;	/* default as text ("[]", "{}" if empty), NULL: required */
	const char *doc;	/* one line */

	/* The rest serves the parser and the documentation checks. */
	const char *group;	/* section of codeexecd.yaml(5): "Identity", ... */
	enum reload_scope scope; /* top-level keys only; fields take their key's */
	size_t offset;		/* of the field in struct config */
	size_t size;		/* of that field; 0: `check` stores the value */
	double min, max;	/* CFG_INT: inclusive; CFG_NUMBER: min < v <= max */
	int min_inclusive;	/* CFG_NUMBER: min <= v */
	const char *const *choices; /* CFG_ENUM: NULL-terminated, index = value */
	/*
	 * CFG_STRING: the value; CFG_LIST: each item; CFG_MAP: each name.
	 * Returns 0, or -1 with the reason in `why`. May be NULL.
	 */
	config_check_fn check;
	/*
	 * CFG_RECORDS: the fields of one record (offsets within the record,
	 * terminated by a NULL name; def NULL: required), the record's size,
	 * and a check of record `i` against those before it (may be NULL).
	 */
	const struct config_key *fields;
	size_t record_size;
	int (*check_record)(struct config *c, size_t i, char *why, size_t why_len);
	/*
	 * CFG_NODE: read value `v` of file `file` into c. Returns 0, or -1
	 * with its own "FILE:LINE:COLUMN: ..." messages in why.
	 */
	int (*node)(struct config *c, const char *file, const struct ynode *v, char *why,
		    size_t why_len);
	/*
	 * Keys with no field of their own (size 0, `check` stores the value):
	 * nonzero if a and b hold different values. May be NULL otherwise.
	 */
	int (*differs)(const struct config *a, const struct config *b);
};

/*
 * Fill `c` with every default of the key table. The caller owns it
 * (config_free). build_dir keeps its "~" and "{name}" until config_load.
 */
void config_defaults(struct config *c);
/*
 * Read `path` into `c` (which config_load initializes). Returns 0, or -1
 * with a message of the form "FILE:LINE:COLUMN: what is wrong" in why
 * ("FILE: why" when the file cannot be read at all). The first error found
 * is reported. On failure `c` is left empty; config_free on it is harmless.
 */
int config_load(const char *path, struct config *c, char *why, size_t why_len);
/* Release everything `c` owns. */
void config_free(struct config *c);
/* Nonzero if two settings differ; NULL is the same as "". */
int config_str_differs(const char *a, const char *b);
/* Nonzero if two lists differ in length or in any entry, in order. */
int config_strlist_differs(const struct strlist *a, const struct strlist *b);
/*
 * Nonzero if key `k` holds different values in a and b (strings, lists,
 * maps and records compared item by item; NULL is the same as "").
 * A CFG_NODE key compares as unchanged: its reader's module compares it.
 */
int config_key_differs(const struct config_key *k, const struct config *a,
		       const struct config *b);
/* Whether field `f` (a scalar, list or mapping) of the records at x and y differs. */
int config_field_differs(const struct config_key *f, const void *x, const void *y);
/*
 * Exchange the value of every RELOAD_LIVE key between `run` and `fresh`,
 * and nothing else: `run` gets the new settings, `fresh` the old ones,
 * to be freed with it. Fatal if a live key has no field of its own.
 */
void config_swap_live(struct config *run, struct config *fresh);
/*
 * Set the scalar key or field `k` of the record at `base` (c itself for a
 * key) from its text `s`, by the one scalar grammar every value is read
 * by; `plain` says the text was written unquoted (only plain text can be a
 * boolean, number or null). Returns 0, or -1 with the reason in why.
 */
int config_set_scalar(struct config *c, void *base, const struct config_key *k, const char *s,
		      int plain, char *why, size_t why_len);
/*
 * A mapping of fields read by a field table (config_field.c): the records
 * of a CFG_RECORDS key, a sidecar, a tool definition. Each returns 0, or
 * -1 with the reason in why, without FILE:LINE:COLUMN: the caller adds
 * the place of the node the reason is about.
 */
/* The field of `fields` (terminated by a NULL name) called `name`, or NULL. */
const struct config_key *config_field_named(const struct config_key *fields, const char *name);
/* Whether key node i of mapping m is a plain name that m does not give before. */
int config_field_key_ok(const struct ynode *m, size_t i, char *why, size_t why_len);
/* Always -1: `name` is none of `fields`, with the nearest one suggested. */
int config_unknown_field(const struct config_key *fields, const char *name, char *why,
			 size_t why_len);
/* Read value node `v` into scalar field `f` of the record at rec ("FIELD: why"). */
int config_read_field(struct config *c, void *rec, const struct config_key *f,
		      const struct ynode *v, char *why, size_t why_len);
/* Whether field `f` holds one scalar (not a list, mapping, records or node). */
int config_field_is_scalar(const struct config_key *f);
/* Apply the default of every scalar field of `fields` that has one; `owner` names them. */
void config_field_defaults(struct config *c, void *rec, const struct config_key *fields,
			   const char *owner);
/* The key table, terminated by an entry whose name is NULL. */
const struct config_key *config_keys(void);
/*
 * The most sessions one identity may hold: pool.max_sessions_per_identity,
 * or its default when 0. With auth on, a quarter of pool.max_sessions (at
 * least 1); with auth.mode none every caller is the one identity
 * "anonymous", which may hold the whole pool.
 */
int config_identity_share(const struct config *c);
/* Record `i` of the assets list. */
static inline const struct config_asset *
config_asset_at(const struct config *c, size_t i)
{
	return (const struct config_asset *)c->assets.v + i;
}
/* Record `i` of the publishers list. */
static inline const struct config_publisher *
config_publisher_at(const struct config *c, size_t i)
{
	return (const struct config_publisher *)c->publishers.v + i;
}
/* Record `i` of the upstreams list. */
static inline const struct config_upstream *
config_upstream_at(const struct config *c, size_t i)
{
	return (const struct config_upstream *)c->upstreams.v + i;
}
/* Record `i` of the egress.inject list. */
static inline const struct config_egress_inject *
config_egress_inject_at(const struct config *c, size_t i)
{
	return (const struct config_egress_inject *)c->egress_inject.v + i;
}
/* "pip", "uv", "conda". */
const char *config_env_type_name(enum env_type t);

#endif
