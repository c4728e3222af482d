/*
 * config_keys.c - the key table: every key of codeexecd.yaml once, with
 * its type, default, checks and one line of documentation. config.c reads
 * the file by it; tests/unit/test_config holds codeexecd.yaml(5) and the
 * sample etc/codeexecd.yaml to it.
 */
#include "autoconf.h"

#include <stddef.h>

#include "config.h"
#include "config_int.h"
#include "netmode.h"
#include "sidecar_config.h"
#include "tooldef.h"

/* sidecars: seed 000's SidecarConfig list (sidecar_config.c reads it). */
static int
read_sidecars(struct config *c, const char *file, const struct ynode *v, char *why,
	      size_t why_len)
{
	return sidecars_read_node(&c->sidecars, file, v, env_name_ok, why, why_len);
}

#define AFIELD(f) \
	.offset = offsetof(struct config_asset, f), .size = sizeof(((struct config_asset *)0)->f)

/* The fields of one `assets` entry. */
static const struct config_key asset_fields[] = {
	{.name = "name", .kind = CFG_STRING, .def = NULL, AFIELD(name), .check = check_nonempty,
	 .doc = "Name of the asset, used in messages."},
	{.name = "source", .kind = CFG_STRING, .def = NULL, AFIELD(source), .check = check_source,
	 .doc = "Where to fetch it from."},
	{.name = "destination", .kind = CFG_STRING, .def = NULL, AFIELD(destination),
	 .check = check_destination, .doc = "Path of the file under asset_cache_dir."},
	{.name = "checksum", .kind = CFG_STRING, .def = NULL, AFIELD(checksum),
	 .check = check_checksum, .doc = "sha256 of the file's content."},
	{.name = "size_hint_mb", .kind = CFG_INT, .def = "0", AFIELD(size_hint_mb), .min = 0,
	 .max = 16777216, .doc = "Expected size in MiB; 0: unknown."},
	{.name = NULL},
};

#define PFIELD(f) \
	.offset = offsetof(struct config_publisher, f), \
	.size = sizeof(((struct config_publisher *)0)->f)

/* The fields of one `publishers` entry. */
static const struct config_key publisher_fields[] = {
	{.name = "name", .kind = CFG_STRING, .def = NULL, PFIELD(name), .check = check_nonempty,
	 .doc = "Name of the publisher, as NAME_send's publisher argument gives it."},
	{.name = "type", .kind = CFG_STRING, .def = NULL, PFIELD(type), .check = check_pub_type,
	 .doc = "local (a directory) or azure_blob (Azure Blob Storage)."},
	{.name = "base_dir", .kind = CFG_STRING, .def = "", PFIELD(base_dir),
	 .check = check_wheelhouse, .doc = "local: the directory artifacts are copied into."},
	{.name = "account_url", .kind = CFG_STRING, .def = "", PFIELD(account_url),
	 .check = check_account_url, .doc = "azure_blob: the account's blob endpoint."},
	{.name = "container", .kind = CFG_STRING, .def = "", PFIELD(container),
	 .doc = "azure_blob: the container blobs go to."},
	{.name = "sas_token_file", .kind = CFG_STRING, .def = "", PFIELD(sas_token_file),
	 .check = check_wheelhouse, .doc = "azure_blob: file holding a SAS token."},
	{.name = "account_key_file", .kind = CFG_STRING, .def = "", PFIELD(account_key_file),
	 .check = check_wheelhouse, .doc = "azure_blob: file holding the account key (SharedKey)."},
	{.name = "managed_identity", .kind = CFG_BOOL, .def = "false", PFIELD(managed_identity),
	 .doc = "azure_blob: take a token from the instance metadata endpoint."},
	{.name = "max_bytes", .kind = CFG_INT, .def = "104857600", PFIELD(max_bytes), .min = 1,
	 .max = 2147483647, .doc = "Largest artifact it takes, in bytes."},
	{.name = "prefix", .kind = CFG_STRING, .def = "{identity}/{session}", PFIELD(prefix),
	 .check = check_prefix, .doc = "Path before each artifact's name."},
	{.name = "auto_publish", .kind = CFG_BOOL, .def = "false", PFIELD(auto_publish),
	 .doc = "Publish the artifacts of every result."},
	{.name = "on_close", .kind = CFG_BOOL, .def = "false", PFIELD(on_close),
	 .doc = "Publish outputs/ when a session ends."},
	{.name = "content_type", .kind = CFG_STRING, .def = "", PFIELD(content_type),
	 .doc = "Content type given to every artifact; empty: guessed from the file."},
	{.name = NULL},
};

#define UFIELD(f) \
	.offset = offsetof(struct config_upstream, f), \
	.size = sizeof(((struct config_upstream *)0)->f)

/* The fields of one `upstreams` entry (code mode). */
static const struct config_key upstream_fields[] = {
	{.name = "name", .kind = CFG_STRING, .def = NULL, UFIELD(name), .check = check_nonempty,
	 .doc = "The module kernels import: from codeexec_upstreams import NAME."},
	{.name = "url", .kind = CFG_STRING, .def = NULL, UFIELD(url), .check = check_upstream_url,
	 .doc = "The server's streamable-HTTP MCP endpoint."},
	{.name = "token_file", .kind = CFG_STRING, .def = "", UFIELD(token_file),
	 .check = check_wheelhouse, .doc = "File holding a bearer token for the server."},
	{.name = "tools", .kind = CFG_LIST, .def = "[]", UFIELD(tools),
	 .doc = "The tools kernels may call; empty: all the server lists."},
	{.name = "allow", .kind = CFG_LIST, .def = "[]", UFIELD(allow),
	 .doc = "Identities that may call them; empty: every one."},
	{.name = "approve", .kind = CFG_LIST, .def = "[]", UFIELD(approve),
	 .doc = "Tools each call of which the agent's client must approve (elicitation)."},
	{.name = "secret_args", .kind = CFG_LIST, .def = "[]", UFIELD(secret_args),
	 .doc = "Argument names the audit log never shows."},
	{.name = "timeout_s", .kind = CFG_NUMBER, .def = "60", UFIELD(timeout_s), .min = 0,
	 .max = 3600, .doc = "Seconds one call may take."},
	{.name = "max_response_bytes", .kind = CFG_INT, .def = "4194304",
	 UFIELD(max_response_bytes), .min = 1024, .max = 268435456,
	 .doc = "Largest answer of one call, in bytes."},
	{.name = "max_calls", .kind = CFG_INT, .def = "1000", UFIELD(max_calls), .min = 1,
	 .max = 2147483647, .doc = "Calls one session may make to this server."},
	{.name = "max_calls_per_minute", .kind = CFG_INT, .def = "120",
	 UFIELD(max_calls_per_minute), .min = 0, .max = 1000000,
	 .doc = "Calls one session may start in a minute; 0: no bound."},
	{.name = "required", .kind = CFG_BOOL, .def = "false", UFIELD(required),
	 .doc = "Refuse to start when the server cannot be reached."},
	{.name = NULL},
};

#define IFIELD(f) \
	.offset = offsetof(struct config_egress_inject, f), \
	.size = sizeof(((struct config_egress_inject *)0)->f)

/* The fields of one `egress.inject` entry. */
static const struct config_key inject_fields[] = {
	{.name = "host", .kind = CFG_STRING, .def = NULL, IFIELD(host), .check = check_inject_host,
	 .doc = "NAME or *.SUFFIX, optional :PORT, that egress.allow lets through."},
	{.name = "header", .kind = CFG_STRING, .def = NULL, IFIELD(header),
	 .check = check_inject_header, .doc = "The header's name, as Authorization."},
	{.name = "secret_file", .kind = CFG_STRING, .def = NULL, IFIELD(secret_file),
	 .check = check_absolute, .doc = "File whose first line is the header's value."},
	{.name = NULL},
};

static const char *const env_types[] = {"pip", "uv", "conda", NULL};
static const char *const exec_modes[] = {"sync", "async_only", "adaptive", NULL};
static const char *const histories[] = {"memory", "none", "disk", NULL};
static const char *const auth_modes[] = {"none", "oauth", "tokens", NULL};
static const char *const front_restarts[] = {"restart", "exit", NULL};
static const char *const pool_starts[] = {"exec", "template", NULL};
static const char *const structured_binaries[] = {"inline", "reference", NULL};
static const char *const tool_backends[] = {"bm25", "azure_ai_search", NULL};

/* tools: a list of tool definitions (tooldef.h). */
static int
read_tools(struct config *c, const char *file, const struct ynode *v, char *why, size_t why_len)
{
	return tooldefs_read_node(&c->tools, file, v, why, why_len);
}

/* The keys whose check stores the value elsewhere: what a reload compares. */
static int
listen_differs(const struct config *a, const struct config *b)
{
	return config_str_differs(a->listen_host, b->listen_host) ||
	       a->listen_port != b->listen_port;
}

static int
metrics_listen_differs(const struct config *a, const struct config *b)
{
	return config_str_differs(a->metrics_listen_host, b->metrics_listen_host) ||
	       a->metrics_listen_port != b->metrics_listen_port;
}

static int
uid_range_differs(const struct config *a, const struct config *b)
{
	return a->kernel_uid_first != b->kernel_uid_first ||
	       a->kernel_uid_last != b->kernel_uid_last;
}

#define FIELD(f) .offset = offsetof(struct config, f), .size = sizeof(((struct config *)0)->f)

/* Every key, once. Groups follow seed 000, plus the daemon's own. */
const struct config_key config_key_table[] = {
	/* Identity */
	{.name = "name", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = NULL,
	 .group = "Identity", FIELD(name), .check = check_name,
	 .doc = "Environment name; the MCP tools are named after it (execute_NAME_code)."},
	{.name = "description", .scope = RELOAD_LIVE, .kind = CFG_STRING, .group = "Identity",
	 FIELD(description),
	 .def = "Execute Python code in a persistent Jupyter kernel.", .check = check_nonempty,
	 .doc = "What the environment offers; the agent reads it in the tool description."},
	{.name = "server_description", .scope = RELOAD_LIVE, .kind = CFG_STRING, .def = "",
	 .group = "Identity", FIELD(server_description),
	 .doc = "Server-level instructions sent to MCP clients at initialization."},
	{.name = "node_name", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Identity", FIELD(node_name), .check = check_node_name,
	 .doc = "This node's tag in a cluster: the handles it mints start with it and a dot "
		"(empty: one node, untagged handles)."},
	{.name = "entra_client_id", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Identity", FIELD(entra_client_id), .check = check_entra_id,
	 .doc = "Entra ID application (client) id: with entra_tenant_id, auth.mode oauth "
		"against that tenant."},
	{.name = "entra_tenant_id", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Identity", FIELD(entra_tenant_id), .check = check_entra_id,
	 .doc = "Entra ID (Azure AD) tenant id of the Entra preset."},

	/* Environment */
	{.name = "type", .scope = RELOAD_RESTART, .kind = CFG_ENUM, .def = "pip",
	 .group = "Environment", FIELD(type),
	 .choices = env_types, .doc = "How the Python environment is built: pip, uv or conda."},
	{.name = "dependency_file", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Environment", FIELD(dependency_file),
	 .doc = "Content of the dependency file: requirements.txt for pip and uv, "
		"environment.yml for conda."},
	{.name = "auto_build", .scope = RELOAD_RESTART, .kind = CFG_BOOL, .def = "true",
	 .group = "Environment",
	 FIELD(auto_build), .doc = "Build the environment at start-up if missing or incomplete."},
	{.name = "build_dir", .scope = RELOAD_RESTART, .kind = CFG_STRING,
	 .def = "~/.cache/mcp-envs/{name}",
	 .group = "Environment", FIELD(build_dir), .check = check_nonempty,
	 .doc = "Directory of the environment; ~ and {name} are expanded."},
	{.name = "python", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "python3",
	 .group = "Environment", FIELD(python), .check = check_python,
	 .doc = "Base interpreter the pip and uv environments are created from."},
	{.name = "system_site_packages", .scope = RELOAD_RESTART, .kind = CFG_BOOL, .def = "false",
	 .group = "Environment", FIELD(system_site_packages),
	 .doc = "Let the environment see the base interpreter's installed packages."},
	{.name = "additional_commands", .scope = RELOAD_RESTART, .kind = CFG_LIST, .def = "[]",
	 .group = "Environment", FIELD(additional_commands), .check = check_command,
	 .doc = "Shell commands run in the environment after the dependencies are installed."},
	{.name = "kernel_environment", .scope = RELOAD_RESTART, .kind = CFG_MAP, .def = "{}",
	 .group = "Environment", FIELD(kernel_environment), .check = check_env_name,
	 .doc = "Non-secret environment variables set in every kernel process."},
	{.name = "asset_cache_dir", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Environment", FIELD(asset_cache_dir),
	 .doc = "Directory of provisioned assets; empty: the parent of build_dir."},
	{.name = "build_timeout_s", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "1800",
	 .group = "Environment", FIELD(build_timeout_s), .min = 1, .max = 604800,
	 .doc = "Seconds the whole environment build may take before it is killed."},
	{.name = "conda_executable", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Environment", FIELD(conda_executable), .check = check_conda_exe,
	 .doc = "Program that builds a conda environment; empty: micromamba, mamba or conda."},
	{.name = "wheelhouse", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Environment", FIELD(wheelhouse), .check = check_wheelhouse,
	 .doc = "Directory of wheels that per-session package installs come from, with no "
		"index; empty: the index of dependency_file."},

	{.name = "kernel", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "ipykernel",
	 .group = "Environment", FIELD(kernel), .check = check_nonempty,
	 .doc = "Kernelspec that serves execute_NAME_code; ipykernel: the environment's own."},
	{.name = "kernel_argv", .scope = RELOAD_RESTART, .kind = CFG_LIST, .def = "[]",
	 .group = "Environment", FIELD(kernel_argv),
	 .doc = "A kernel's command instead of a kernelspec, with {connection_file}."},
	{.name = "kernel_language", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Environment", FIELD(kernel_language),
	 .doc = "The language of kernel_argv's kernel (r, octave, python, ...)."},

	/* Assets */
	{.name = "assets", .scope = RELOAD_RESTART, .kind = CFG_RECORDS, .def = "[]",
	 .group = "Assets", FIELD(assets),
	 .fields = asset_fields, .record_size = sizeof(struct config_asset),
	 .check_record = check_asset_unique,
	 .doc = "Files fetched into asset_cache_dir at start-up, each checked by its sha256."},
	{.name = "auto_provision", .scope = RELOAD_RESTART, .kind = CFG_BOOL, .def = "true",
	 .group = "Assets",
	 FIELD(auto_provision), .doc = "Fetch the declared assets at start-up."},
	{.name = "asset_timeout_s", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "600",
	 .group = "Assets", FIELD(asset_timeout_s), .min = 1, .max = 604800,
	 .doc = "Seconds the download of one asset may take."},
	{.name = "asset_max_mb", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "10240",
	 .group = "Assets", FIELD(asset_max_mb), .min = 1, .max = 16777216,
	 .doc = "Largest asset, in MiB; a larger download is stopped and refused."},

	/* Sidecars (seed 000's SidecarConfig, issue 14) */
	{.name = "sidecars", .scope = RELOAD_SIDECARS, .kind = CFG_NODE, .def = "[]",
	 .group = "Sidecars", .offset = 0, .size = 0, .node = read_sidecars,
	 .doc = "Long-lived helpers started before the pool, each loading an expensive "
		"resource once for every session; kernels get their URL."},

	/* Artifacts (issue 16) */
	{.name = "publishers", .scope = RELOAD_RESTART, .kind = CFG_RECORDS, .def = "[]",
	 .group = "Artifacts", FIELD(publishers), .fields = publisher_fields,
	 .record_size = sizeof(struct config_publisher), .check_record = check_publisher,
	 .doc = "Where NAME_send publishes the session's files: directories and Azure Blob "
		"containers."},
	/* Code mode (issue 35) */
	{.name = "upstreams", .scope = RELOAD_RESTART, .kind = CFG_RECORDS, .def = "[]",
	 .group = "Tools", FIELD(upstreams), .fields = upstream_fields,
	 .record_size = sizeof(struct config_upstream), .check_record = check_upstream,
	 .doc = "MCP servers whose tools kernels call as Python functions, through the "
		"daemon, with its credentials."},
	{.name = "max_upload_bytes", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "2097152",
	 .group = "Artifacts", FIELD(max_upload_bytes), .min = 0, .max = 33554432,
	 .doc = "Largest file NAME_upload_file writes, in bytes; 0 removes the tool."},
	{.name = "files_extension", .scope = RELOAD_LIVE, .kind = CFG_BOOL, .def = "false",
	 .group = "Artifacts", FIELD(files_extension),
	 .doc = "Declare NAME_upload_file's data_uri as a file input (x-mcp-file, the draft "
		"MCP files extension); its path may then come from the URI's name=."},
	{.name = "resource_max_bytes", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "10485760",
	 .group = "Artifacts", FIELD(resource_max_bytes), .min = 1, .max = 67108864,
	 .doc = "Largest session file resources/read returns, in bytes."},

	/* Execution */
	{.name = "default_timeout", .scope = RELOAD_LIVE, .kind = CFG_NUMBER, .def = "300",
	 .group = "Execution", FIELD(default_timeout), .min = 0, .max = 2592000,
	 .doc = "Seconds an execution may run when the call names no timeout."},
	{.name = "max_timeout", .scope = RELOAD_LIVE, .kind = CFG_NUMBER, .def = "600",
	 .group = "Execution", FIELD(max_timeout), .min = 0, .max = 2592000,
	 .doc = "Largest timeout, in seconds, of one execution; longer requests get this."},
	{.name = "execution_mode", .scope = RELOAD_LIVE, .kind = CFG_ENUM, .def = "sync",
	 .group = "Execution", FIELD(execution_mode), .choices = exec_modes,
	 .doc = "sync waits for the result, async_only always backgrounds, adaptive promotes "
		"long calls to background jobs."},
	{.name = "promotion_threshold_s", .scope = RELOAD_LIVE, .kind = CFG_NUMBER, .def = "60",
	 .group = "Execution", FIELD(promotion_threshold_s), .min = 0, .max = 2592000,
	 .doc = "In adaptive mode, seconds after which a running call becomes a job."},
	{.name = "output_truncation_threshold", .scope = RELOAD_LIVE, .kind = CFG_INT,
	 .def = "50000",
	 .group = "Execution", FIELD(output_truncation_threshold), .min = 100, .max = 100000000,
	 .doc = "Characters of stdout and of stderr returned; the rest is saved to a file."},
	{.name = "rich_output_max_bytes", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "5242880",
	 .group = "Execution", FIELD(rich_output_max_bytes), .min = 1024, .max = 33554432,
	 .doc = "Largest rich output (image, HTML) returned; a larger one is saved to a file."},
	{.name = "inline_output_max_bytes", .scope = RELOAD_LIVE, .kind = CFG_INT,
	 .def = "1048576", .group = "Execution", FIELD(inline_output_max_bytes), .min = 0,
	 .max = 33554432,
	 .doc = "Largest rich output carried in a result; a larger one is saved under "
		"outputs/rich/ and named by a resource link; 0: never."},
	{.name = "structured_binary", .scope = RELOAD_LIVE, .kind = CFG_ENUM, .def = "inline",
	 .group = "Execution", FIELD(structured_binary), .choices = structured_binaries,
	 .doc = "reference: structuredContent names images and other binary rich outputs by "
		"resource link always, without their base64."},
	{.name = "allow_mime", .scope = RELOAD_LIVE, .kind = CFG_LIST, .group = "Execution",
	 FIELD(allow_mime),
	 .def = "[text/plain, text/html, text/markdown, text/latex, image/png, image/svg+xml, "
		"image/jpeg, application/json, application/javascript, application/pdf]",
	 .check = check_mime,
	 .doc = "MIME types of rich outputs kept in results (text/plain always is); a call "
		"may narrow them."},
	{.name = "matplotlib_backend", .scope = RELOAD_RESTART, .kind = CFG_STRING,
	 .def = CONFIG_MPL_INLINE,
	 .group = "Execution", FIELD(matplotlib_backend), .check = check_backend,
	 .doc = "matplotlib backend of every kernel (MPLBACKEND); none leaves matplotlib to "
		"choose."},
	{.name = "parallel_max_concurrency", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "0",
	 .group = "Execution", FIELD(parallel_max_concurrency), .min = 0, .max = 65536,
	 .doc = "Most kernels one parallel_execute batch runs at once; 0 bounds it by the pool."},
	{.name = "parallel_max_inputs", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "1000",
	 .group = "Execution", FIELD(parallel_max_inputs), .min = 1, .max = 1000000,
	 .doc = "Most inputs one parallel_execute batch accepts; a larger batch is refused."},
	{.name = "progress_interval_s", .scope = RELOAD_LIVE, .kind = CFG_NUMBER, .def = "5",
	 .group = "Execution", FIELD(progress_interval_s), .min = 0, .max = 3600,
	 .doc = "Longest pause between progress notifications of a streamed call."},
	{.name = "checkpoint.max_bytes", .scope = RELOAD_LIVE, .kind = CFG_INT,
	 .def = "1073741824", .group = "Execution", FIELD(checkpoint_max_bytes), .min = 1024,
	 .max = 1099511627776.0,
	 .doc = "Largest checkpoint of a kernel's namespace; a larger one is not taken."},
	{.name = "checkpoint.max_seconds", .scope = RELOAD_LIVE, .kind = CFG_NUMBER, .def = "60",
	 .group = "Execution", FIELD(checkpoint_max_seconds), .min = 0, .max = 3600,
	 .doc = "Longest a checkpoint, or a restore, may take; a slower one is abandoned."},
	{.name = "checkpoint.interval_s", .scope = RELOAD_LIVE, .kind = CFG_NUMBER, .def = "60",
	 .group = "Execution", FIELD(checkpoint_interval_s), .min = 0, .min_inclusive = 1,
	 .max = 86400,
	 .doc = "Least time between two automatic checkpoints of a session; 0: none."},
	{.name = "fork_max_bytes", .scope = RELOAD_RESTART, .kind = CFG_INT,
	 .def = "1073741824", .group = "Execution", FIELD(fork_max_bytes), .min = 0,
	 .max = 1099511627776.0,
	 .doc = "Largest working directory fork_session and parallel_execute's from_session "
		"copy (file contents); a larger one is refused. 0: forks are off."},
	{.name = "job_retention_s", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "3600",
	 .group = "Execution", FIELD(job_retention_s), .min = 0, .max = 2592000,
	 .doc = "Seconds a finished background job stays available to check_job."},
	{.name = "session_idle_timeout", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "0",
	 .group = "Execution", FIELD(session_idle_timeout), .min = 0, .max = 2592000,
	 .doc = "Seconds after which an unused session is closed; 0: never (it hibernates)."},
	{.name = "session_hibernate_after", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "600",
	 .group = "Execution", FIELD(session_hibernate_after), .min = 0, .max = 2592000,
	 .doc = "Seconds after which an idle session is checkpointed and its kernel ended; "
		"0: never."},
	{.name = "session_retention", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "604800",
	 .group = "Execution", FIELD(session_retention), .min = 0, .max = 315360000,
	 .doc = "Seconds a hibernated session is kept after its last call; 0: forever."},
	{.name = "persist_sessions", .scope = RELOAD_RESTART, .kind = CFG_BOOL, .def = "true",
	 .group = "Execution", FIELD(persist_sessions),
	 .doc = "Sessions outlive a restart of the daemon or its front: checkpointed at the "
		"stop, kept hibernated from the session journal in state_dir."},
	{.name = "max_hibernated_sessions", .scope = RELOAD_RESTART, .kind = CFG_INT,
	 .def = "1000", .group = "Execution", FIELD(max_hibernated_sessions), .min = 0,
	 .max = 100000,
	 .doc = "Most hibernated sessions kept; beyond it the least recently used is closed."},
	{.name = "session_idle_timeout_unused", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "60",
	 .group = "Execution", FIELD(session_idle_timeout_unused), .min = 0, .max = 2592000,
	 .doc = "Seconds after which an execution session of the 2026-07-28 path that no call "
		"named again after its first is closed; 0: session_idle_timeout alone."},

	/* Daemon */
	{.name = "listen", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "127.0.0.1:8000",
	 .group = "Daemon", .offset = 0, .size = 0, .check = check_listen, .differs = listen_differs,
	 .doc = "Address and TCP port of the MCP HTTP endpoint, HOST:PORT or [V6]:PORT."},
	{.name = "metrics_listen", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Daemon", .offset = 0, .size = 0, .check = check_metrics_listen,
	 .differs = metrics_listen_differs,
	 .doc = "Address of a listener of its own for /metrics, as listen; empty: /metrics is "
		"served on the listen address."},
	{.name = "allow_external_network_boundary", .scope = RELOAD_RESTART, .kind = CFG_BOOL,
	 .def = "false", .group = "Daemon", FIELD(allow_external_network_boundary),
	 .doc = "Acknowledge that a non-loopback listen address without authentication is "
		"protected by an external network boundary."},
	{.name = "allowed_origins", .scope = RELOAD_LIVE, .kind = CFG_LIST, .def = "[]",
	 .group = "Daemon", FIELD(allowed_origins), .check = check_origin,
	 .doc = "Browser origins allowed besides loopback ones (scheme://host[:port])."},
	{.name = "max_request_bytes", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "4194304",
	 .group = "Daemon", FIELD(max_request_bytes), .min = 1, .max = 1073741824,
	 .doc = "Largest HTTP request body accepted; larger ones get HTTP 413."},
	{.name = "state_dir", .scope = RELOAD_RESTART, .kind = CFG_STRING,
	 .def = "/var/lib/codeexecd", .group = "Daemon", FIELD(state_dir), .check = check_absolute,
	 .doc = "Persistent state: session working directories and artifacts."},
	{.name = "runtime_dir", .scope = RELOAD_RESTART, .kind = CFG_STRING,
	 .def = "/run/codeexecd", .group = "Daemon", FIELD(runtime_dir), .check = check_absolute,
	 .doc = "Runtime files: sockets, kernel connection files, the pid file."},
	{.name = "pool.warm", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "2", .group = "Daemon",
	 FIELD(pool_warm),
	 .min = 0, .max = 1024, .doc = "Kernels kept started and idle, ready for new sessions."},
	{.name = "pool.preload", .scope = RELOAD_LIVE, .kind = CFG_LIST, .def = "[]",
	 .group = "Daemon", FIELD(pool_preload), .check = check_module_name,
	 .doc = "Python modules every pooled kernel imports before a session gets it; one "
		"that cannot be imported makes kernels fail to start, saying why."},
	{.name = "pool.warm_max", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "0",
	 .group = "Daemon", FIELD(pool_warm_max), .min = 0, .max = 1024,
	 .doc = "Most idle kernels the pool grows to when sessions arrive quickly; "
		"at or below pool.warm, the pool stays at pool.warm."},
	{.name = "pool.start", .scope = RELOAD_RESTART, .kind = CFG_ENUM, .def = "exec",
	 .group = "Daemon", FIELD(pool_start), .choices = pool_starts,
	 .doc = "How kernels start: exec (fork and exec Python, every kernel its own start) "
		"or template (not built yet: kernels start by exec)."},
	{.name = "pool.max_starting", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "0",
	 .group = "Daemon", FIELD(pool_max_starting), .min = 0, .max = 1024,
	 .doc = "Kernels that start at once, at most; 0: three per online CPU."},
	{.name = "pool.max_sessions", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "100",
	 .group = "Daemon", FIELD(pool_max_sessions), .min = 1, .max = 65536,
	 .doc = "Most sessions (each with its own kernel) open at once."},
	{.name = "pool.max_sessions_per_identity", .scope = RELOAD_LIVE, .kind = CFG_INT,
	 .def = "0", .group = "Daemon",
	 FIELD(pool_max_sessions_per_identity), .min = 0, .max = 65536,
	 .doc = "Most sessions one identity holds; beyond them its least recently used idle "
		"session is closed. 0: a quarter of pool.max_sessions with auth on, all of it "
		"with auth.mode none."},
	{.name = "http.threads", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "0",
	 .group = "Daemon", FIELD(http_threads), .min = 0, .max = 4096,
	 .doc = "HTTP threads, one per open connection; 0: pool.max_sessions times the streams "
		"and calls a session may hold, plus 64."},
	{.name = "http.keep_alive_s", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "15",
	 .group = "Daemon", FIELD(http_keep_alive_s), .min = 1, .max = 3600,
	 .doc = "Seconds an idle keep-alive connection is kept for the client's next request."},
	{.name = "http.header_timeout_s", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "10",
	 .group = "Daemon", FIELD(http_header_timeout_s), .min = 1, .max = 3600,
	 .doc = "Seconds a client has to send a request's headers, and again its body."},
	{.name = "http.max_streams_per_session", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "1",
	 .group = "Daemon", FIELD(http_max_streams_per_session), .min = 1, .max = 64,
	 .doc = "GET event streams one session may hold open; a newer one closes the oldest."},
	{.name = "http.max_concurrent_calls_per_session", .scope = RELOAD_LIVE, .kind = CFG_INT,
	 .def = "4", .group = "Daemon", FIELD(http_max_calls_per_session), .min = 1, .max = 1024,
	 .doc = "JSON-RPC requests of one session in flight at once; more get an error at once."},
	{.name = "http.max_connections_per_client", .scope = RELOAD_RESTART, .kind = CFG_INT,
	 .def = "0",
	 .group = "Daemon", FIELD(http_max_connections_per_client), .min = 0, .max = 65536,
	 .doc = "Connections one client address may hold open; 0: half of http.threads."},
	{.name = "http.linger_s", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "10",
	 .group = "Daemon", FIELD(http_linger_s), .min = 0, .max = 600,
	 .doc = "Seconds the rest of a body answered 413 is read and dropped before the close."},
	{.name = "http.linger_bytes", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "134217728",
	 .group = "Daemon", FIELD(http_linger_bytes), .min = 0, .max = 1073741824,
	 .doc = "Bytes of a body answered 413 read and dropped at most before the close."},
	{.name = "log_facility", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "daemon",
	 .group = "Daemon", FIELD(log_facility), .check = check_facility,
	 .doc = "Syslog facility used when codeexecd runs detached."},
	{.name = "shutdown_grace_s", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "10",
	 .group = "Daemon", FIELD(shutdown_grace_s), .min = 0, .max = 3600,
	 .doc = "Seconds a stopping daemon lets running executions finish."},
	{.name = "front_restart", .scope = RELOAD_RESTART, .kind = CFG_ENUM, .def = "restart",
	 .group = "Daemon", FIELD(front_restart), .choices = front_restarts,
	 .doc = "When the unprivileged front dies: restart it (its sessions come back from "
		"the journal with persist_sessions, else are lost) or exit non-zero."},
	{.name = "user", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "", .group = "Daemon",
	 FIELD(user),
	 .doc = "User the daemon runs as after start-up when started as root; empty: stay."},
	{.name = "group", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Daemon", FIELD(group),
	 .doc = "Group the daemon runs as with user; empty: the user's login group."},
	{.name = "control_group", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Daemon", FIELD(control_group),
	 .doc = "Group whose members may use the control socket besides root; never a "
		"kernel's."},

	/* Isolation */
	{.name = "kernel_network_mode", .scope = RELOAD_RESTART, .kind = CFG_ENUM,
	 .def = "inherit", .group = "Isolation",
	 FIELD(kernel_network_mode), .choices = net_mode_names,
	 .doc = "inherit, isolated (own network namespace, loopback only) or seccomp "
		"(no IP sockets)."},
	{.name = "kernel_uid_range", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Isolation", .offset = 0, .size = 0, .check = check_uid_range,
	 .differs = uid_range_differs,
	 .doc = "START-END: each kernel runs under its own host UID and GID from this range."},
	{.name = "limits.memory_mb", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "0",
	 .group = "Isolation", FIELD(limit_memory_mb), .min = 0, .max = 16777216,
	 .doc = "Memory of one kernel and its children, in MiB (cgroup); 0: no limit."},
	{.name = "limits.pids", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "0",
	 .group = "Isolation", FIELD(limit_pids), .min = 0, .max = 4194304,
	 .doc = "Processes and threads of one kernel (cgroup); 0: no limit."},
	{.name = "limits.cpu", .scope = RELOAD_RESTART, .kind = CFG_NUMBER, .def = "0",
	 .group = "Isolation", FIELD(limit_cpu), .min = 0, .min_inclusive = 1, .max = 1024,
	 .doc = "CPU of one kernel as a share of one core, as 0.5 (cgroup); 0: no limit."},
	{.name = "limits.nofile", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "0",
	 .group = "Isolation", FIELD(limit_nofile), .min = 0, .max = 1048576,
	 .doc = "Open files of one kernel process (RLIMIT_NOFILE); 0: inherited."},
	{.name = "limits.fsize_mb", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "0",
	 .group = "Isolation", FIELD(limit_fsize_mb), .min = 0, .max = 16777216,
	 .doc = "Largest file a kernel may write, in MiB (RLIMIT_FSIZE); 0: no limit."},
	{.name = "limits.required", .scope = RELOAD_RESTART, .kind = CFG_BOOL, .def = "false",
	 .group = "Isolation", FIELD(limits_required),
	 .doc = "Refuse to start when a configured limit cannot be enforced on this host."},
	{.name = "kernel_history", .scope = RELOAD_RESTART, .kind = CFG_ENUM, .def = "memory",
	 .group = "Isolation", FIELD(kernel_history), .choices = histories,
	 .doc = "IPython history: memory (this kernel only), none, or disk (the session's "
		"HOME)."},
	{.name = "kernel_landlock", .scope = RELOAD_RESTART, .kind = CFG_ENUM, .def = "off",
	 .group = "Isolation", FIELD(kernel_landlock), .choices = landlock_use_names,
	 .doc = "Landlock confinement of kernels: auto (where this kernel offers it), required "
		"(ABI 6 or later, or no kernel starts) or off."},
	{.name = "egress.allow", .scope = RELOAD_RESTART, .kind = CFG_LIST, .def = "[]",
	 .group = "Isolation", FIELD(egress_allow), .check = check_egress_allow,
	 .doc = "Hosts (NAME, *.SUFFIX, optional :PORT) and CIDRs isolated kernels may reach "
		"through the egress proxy; empty: no proxy."},
	{.name = "egress.deny", .scope = RELOAD_RESTART, .kind = CFG_LIST, .def = "[]",
	 .group = "Isolation", FIELD(egress_deny), .check = check_egress_deny,
	 .doc = "Hosts and CIDRs refused even when egress.allow names them; also checked "
		"against every resolved address."},
	{.name = "egress.hosts_file", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Isolation", FIELD(egress_hosts_file), .check = check_absolute_or_empty,
	 .doc = "File in /etc/hosts format the proxy consults before DNS; empty: DNS only."},
	{.name = "egress.max_bytes", .scope = RELOAD_RESTART, .kind = CFG_INT,
	 .def = "1073741824", .group = "Isolation", FIELD(egress_max_bytes), .min = 0,
	 .max = 2147483647,
	 .doc = "Bytes one session may move through the proxy, both ways; 0: no limit."},
	{.name = "egress.max_connections", .scope = RELOAD_RESTART, .kind = CFG_INT,
	 .def = "32", .group = "Isolation", FIELD(egress_max_connections), .min = 1,
	 .max = 4096, .doc = "Connections one session may hold open through the proxy at once."},
	{.name = "egress.inject", .scope = RELOAD_RESTART, .kind = CFG_RECORDS, .def = "[]",
	 .group = "Isolation", FIELD(egress_inject), .fields = inject_fields,
	 .record_size = sizeof(struct config_egress_inject), .check_record = check_inject,
	 .doc = "Headers the egress proxy adds to HTTPS requests to a host, which it "
		"intercepts with its own CA; the value comes from a secret file."},
	{.name = "egress.upstream_ca_file", .scope = RELOAD_RESTART, .kind = CFG_STRING,
	 .def = "", .group = "Isolation", FIELD(egress_upstream_ca_file),
	 .check = check_absolute_or_empty,
	 .doc = "PEM file of CAs an intercepted upstream's certificate may also chain to, "
		"besides the system's; empty: the system's only."},

	/* Authentication: the checks and the Entra preset are in auth_config.c. */
	{.name = "auth.mode", .scope = RELOAD_RESTART, .kind = CFG_ENUM, .def = "none",
	 .group = "Authentication", FIELD(auth_mode), .choices = auth_modes,
	 .doc = "none (loopback only), oauth (JWT bearer tokens of an issuer) or tokens "
		"(static bearer tokens of auth.tokens_file)."},
	{.name = "auth.resource", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Authentication", FIELD(auth_resource), .check = check_auth_url,
	 .doc = "URL of the /mcp endpoint as clients reach it (the RFC 9728 resource); "
		"empty: http://LISTEN/mcp."},
	{.name = "auth.issuer", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Authentication", FIELD(auth_issuer), .check = check_auth_url,
	 .doc = "Issuer every token's iss must equal exactly."},
	{.name = "auth.audience", .scope = RELOAD_RESTART, .kind = CFG_LIST, .def = "[]",
	 .group = "Authentication", FIELD(auth_audience), .check = check_nonempty,
	 .doc = "Audiences a token's aud must name one of; empty: auth.resource."},
	{.name = "auth.jwks_uri", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Authentication", FIELD(auth_jwks_uri), .check = check_auth_https,
	 .doc = "https URL of the issuer's JWKS; empty: the jwks_uri of its "
		"/.well-known/openid-configuration."},
	{.name = "auth.required_scopes", .scope = RELOAD_RESTART, .kind = CFG_LIST, .def = "[]",
	 .group = "Authentication", FIELD(auth_required_scopes), .check = check_scope,
	 .doc = "Scopes every token must grant (scp or scope claim)."},
	{.name = "auth.allowed_algorithms", .scope = RELOAD_RESTART, .kind = CFG_LIST,
	 .def = "[RS256, ES256]",
	 .group = "Authentication", FIELD(auth_allowed_algorithms), .check = check_jwt_alg,
	 .doc = "JWS algorithms accepted: RS256, RS384, RS512, PS256, PS384, PS512, ES256, "
		"ES384."},
	{.name = "auth.clock_skew_s", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "60",
	 .group = "Authentication", FIELD(auth_clock_skew_s), .min = 0, .max = 600,
	 .doc = "Seconds of clock difference allowed when checking exp and nbf."},
	{.name = "auth.identity_claim", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Authentication", FIELD(auth_identity_claim),
	 .doc = "Claim naming the caller; empty: sub, or oid with the Entra preset."},
	{.name = "auth.authorization_servers", .scope = RELOAD_RESTART, .kind = CFG_LIST,
	 .def = "[]",
	 .group = "Authentication", FIELD(auth_authorization_servers), .check = check_auth_url,
	 .doc = "Authorization servers named in the RFC 9728 metadata; empty: auth.issuer."},
	{.name = "auth.ca_file", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Authentication", FIELD(auth_ca_file), .check = check_absolute_or_empty,
	 .doc = "PEM file of the CAs trusted for the issuer's https; empty: the system's."},
	{.name = "auth.tokens_file", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Authentication", FIELD(auth_tokens_file), .check = check_absolute_or_empty,
	 .doc = "File of IDENTITY: SHA256HEX lines for auth.mode tokens; a secret file "
		"(root:root 0600, opened by the parent as root)."},
	/*
	 * Tools (issue 15): seed 000's ToolRegistry and preprocess_code, as
	 * configuration. The definitions are read by tooldef.c.
	 */
	{.name = "tools", .scope = RELOAD_LIVE, .kind = CFG_NODE, .def = "[]", .group = "Tools",
	 FIELD(tools), .node = read_tools,
	 .doc = "Domain tool definitions (ToolDefinition fields), found by search_NAME_tools "
		"and imported by code."},
	{.name = "tools_dir", .scope = RELOAD_LIVE, .kind = CFG_STRING, .def = "",
	 .group = "Tools", FIELD(tools_dir), .check = check_wheelhouse,
	 .doc = "Directory whose *.yaml files hold more tool definitions, and whose Python "
		"files kernels can import; empty: none."},
	{.name = "tool_search_backend", .scope = RELOAD_LIVE, .kind = CFG_ENUM, .def = "bm25",
	 .group = "Tools", FIELD(tool_search_backend), .choices = tool_backends,
	 .doc = "How search_NAME_tools ranks the tools: bm25, or azure_ai_search (an Azure AI "
		"Search index, with azure_ai_search.*)."},
	{.name = "azure_ai_search.endpoint", .scope = RELOAD_LIVE, .kind = CFG_STRING, .def = "",
	 .group = "Tools", FIELD(azure_endpoint), .check = check_endpoint,
	 .doc = "URL of the Azure AI Search service, https://NAME.search.windows.net."},
	{.name = "azure_ai_search.index", .scope = RELOAD_LIVE, .kind = CFG_STRING, .def = "",
	 .group = "Tools", FIELD(azure_index), .check = check_index,
	 .doc = "Index holding one document per tool, keyed by the tool's name."},
	{.name = "azure_ai_search.api_key_file", .scope = RELOAD_LIVE, .kind = CFG_STRING,
	 .def = "", .group = "Tools", FIELD(azure_api_key_file), .check = check_wheelhouse,
	 .doc = "File holding the query key; a secret file (root:root 0600, opened by the "
		"parent as root)."},
	{.name = "azure_ai_search.api_version", .scope = RELOAD_LIVE, .kind = CFG_STRING,
	 .def = "2023-11-01",
	 .group = "Tools", FIELD(azure_api_version), .check = check_api_version,
	 .doc = "REST API version of the requests."},
	{.name = "azure_ai_search.timeout_s", .scope = RELOAD_LIVE, .kind = CFG_INT, .def = "10",
	 .group = "Tools", FIELD(azure_timeout_s), .min = 1, .max = 300,
	 .doc = "Seconds one search request may take; after it, the local BM25 answers."},
	{.name = "code_prefix", .scope = RELOAD_LIVE, .kind = CFG_STRING, .def = "",
	 .group = "Tools", FIELD(code_prefix),
	 .doc = "Python code every kernel runs once when it starts, before the agent's first "
		"execution (common imports)."},
	{.name = "preprocess_command", .scope = RELOAD_RESTART, .kind = CFG_STRING, .def = "",
	 .group = "Tools", FIELD(preprocess_command), .check = check_preprocess_command,
	 .doc = "Executable (absolute path) that gets each execution's code on stdin and "
		"writes the code to run on stdout; run as user, never as root."},
	{.name = "preprocess_timeout_s", .scope = RELOAD_RESTART, .kind = CFG_INT, .def = "10",
	 .group = "Tools", FIELD(preprocess_timeout_s), .min = 1, .max = 300,
	 .doc = "Seconds preprocess_command may take; then its process group is killed and "
		"the call fails."},
	{.name = "preprocess_max_bytes", .scope = RELOAD_RESTART, .kind = CFG_INT,
	 .def = "1048576", .group = "Tools",
	 FIELD(preprocess_max_bytes), .min = 1024, .max = 67108864,
	 .doc = "Bytes preprocess_command may write to stdout, and to stderr; more fails "
		"the call."},

	{.name = NULL},
};

const size_t config_key_count = sizeof(config_key_table) / sizeof(config_key_table[0]) - 1;

const struct config_key *
config_keys(void)
{
	return config_key_table;
}
