/*
 * ipc_schema.c - the field tables of every message of ipc_msg.h, the walk
 * that frees a message by its table, and the small helpers that fill or read
 * those messages' structs. See ipc_schema.h.
 */
#include "autoconf.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "ipc_schema.h"
#include "xmalloc.h"

#define M(S, m) offsetof(struct S, m)
#define IPC_F_BOOL(S, n, m, fl) {n, IPC_K_BOOL, M(S, m), fl, 0, 1, NULL, NULL, 0}
#define IPC_F_INT(S, n, m, lo, hi, fl) {n, IPC_K_INT, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_U32(S, n, m, lo, hi, fl) {n, IPC_K_U32, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_U64(S, n, m, lo, hi, fl) {n, IPC_K_U64, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_DOUBLE(S, n, m, lo, hi, fl) {n, IPC_K_DOUBLE, M(S, m), fl, lo, hi, NULL, NULL, 0}
#define IPC_F_STR(S, n, m, max, fl) {n, IPC_K_STR, M(S, m), fl, 0, max, NULL, NULL, 0}
#define IPC_F_TEXT(S, n, m, max, fl) {n, IPC_K_TEXT, M(S, m), fl, 0, max, NULL, NULL, 0}
#define IPC_F_STRV(S, n, m, max, fl) {n, IPC_K_STRV, M(S, m), fl, 0, max, NULL, NULL, 0}
#define IPC_F_ENV(S, n, m, fl) {n, IPC_K_ENV, M(S, m), fl, 0, IPC_VEC_MAX, NULL, NULL, 0}
#define IPC_F_ENUM(S, n, m, ch, fl) {n, IPC_K_ENUM, M(S, m), fl, 0, 0, ch, NULL, 0}
#define IPC_F_OBJ(S, n, m, sub, fl) {n, IPC_K_OBJ, M(S, m), fl, 0, 0, NULL, &sub, 0}
#define IPC_F_LIST(S, n, m, cnt, max, sub, fl) \
	{n, IPC_K_LIST, M(S, m), fl, 0, max, NULL, &sub, M(S, cnt)}
#define IPC_F_JSON(S, n, m, fl) {n, IPC_K_JSON, M(S, m), fl, 0, 0, NULL, NULL, 0}
#define SCHEMA(nm, S, tbl, chk) {nm, sizeof(struct S), tbl, sizeof(tbl) / sizeof(tbl[0]), chk}

/* ---- The messages ---- */

static const char *const interrupt_modes[] = {"signal", "message", NULL};
static const char *const stream_names[] = {"stdout", "stderr", NULL};

static const struct ipc_field limits_fields[] = {
	IPC_F_U64(ipc_limits, "memory_mb", memory_mb, 0, 1 << 30, IPC_OPT),
	IPC_F_U64(ipc_limits, "pids", pids, 0, 1 << 22, IPC_OPT),
	IPC_F_DOUBLE(ipc_limits, "cpu", cpu, 0, 4096, IPC_OPT),
	IPC_F_U64(ipc_limits, "nofile", nofile, 0, 1 << 20, IPC_OPT),
	IPC_F_U64(ipc_limits, "fsize_mb", fsize_mb, 0, 1 << 30, IPC_OPT),
};
static const struct ipc_schema limits_schema = SCHEMA("limits", ipc_limits, limits_fields, NULL);

static const struct ipc_field cgroup_ctl_fields[] = {
	IPC_F_INT(ipc_cgroup_ctl, "version", version, 1, 2, IPC_REQ),
	IPC_F_STR(ipc_cgroup_ctl, "parent", parent, 4096, IPC_REQ | IPC_ABS),
};
static const struct ipc_schema cgroup_ctl_schema =
	SCHEMA("cgroup controller", ipc_cgroup_ctl, cgroup_ctl_fields, NULL);

/* The members are cgroup_ctl_name()'s names, in enum cgroup_ctl's order. */
static const struct ipc_field cgroup_fields[] = {
	IPC_F_STR(ipc_cgroup, "name", name, 200, IPC_REQ | IPC_NAME),
	IPC_F_OBJ(ipc_cgroup, "memory", memory, cgroup_ctl_schema, IPC_OPT),
	IPC_F_OBJ(ipc_cgroup, "pids", pids, cgroup_ctl_schema, IPC_OPT),
	IPC_F_OBJ(ipc_cgroup, "cpu", cpu, cgroup_ctl_schema, IPC_OPT),
	IPC_F_OBJ(ipc_cgroup, "freezer", freezer, cgroup_ctl_schema, IPC_OPT),
};
static const struct ipc_schema cgroup_schema = SCHEMA("cgroup", ipc_cgroup, cgroup_fields, NULL);

static int
start_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_start *s = msg;

	if ((s->uid == 0) != (s->gid == 0))
		return err_set(why, why_len, "uid and gid must come together");
	if (s->limits && (s->limits->memory_mb || s->limits->pids || s->limits->cpu > 0) &&
	    s->cgroup == NULL)
		return err_set(why, why_len,
			       "limits.memory_mb, pids and cpu need a cgroup layout");
	return 0;
}

static const struct ipc_field start_fields[] = {
	IPC_F_STRV(ipc_start, "argv", argv, IPC_VEC_MAX, IPC_REQ | IPC_NONEMPTY),
	IPC_F_ENV(ipc_start, "env", env, IPC_REQ),
	IPC_F_STR(ipc_start, "cwd", cwd, 4096, IPC_REQ | IPC_ABS),
	IPC_F_STR(ipc_start, "runtime_dir", runtime_dir, 4096, IPC_REQ | IPC_ABS),
	IPC_F_STRV(ipc_start, "allow_mime", allow_mime, IPC_VEC_MAX, IPC_OPT),
	IPC_F_STR(ipc_start, "warm_code", warm_code, 65536, IPC_OPT),
	IPC_F_STRV(ipc_start, "unix_fds", unix_fds, 16, IPC_OPT),
	IPC_F_BOOL(ipc_start, "upstreams", upstreams, IPC_OPT),
	IPC_F_STR(ipc_start, "egress_socket", egress_socket, 107, IPC_OPT | IPC_ABS),
	IPC_F_ENUM(ipc_start, "interrupt_mode", interrupt_mode, interrupt_modes, IPC_OPT),
	IPC_F_DOUBLE(ipc_start, "startup_timeout_s", startup_timeout_s, 0, 86400, IPC_OPT),
	IPC_F_ENUM(ipc_start, "network_mode", network_mode, net_mode_names, IPC_OPT),
	/* never 0 when present: a kernel never runs as root */
	IPC_F_U32(ipc_start, "uid", uid, 1, UINT32_MAX - 1, IPC_OPT),
	IPC_F_U32(ipc_start, "gid", gid, 1, UINT32_MAX - 1, IPC_OPT),
	IPC_F_OBJ(ipc_start, "limits", limits, limits_schema, IPC_OPT),
	IPC_F_OBJ(ipc_start, "cgroup", cgroup, cgroup_schema, IPC_OPT),
	IPC_F_INT(ipc_start, "landlock_abi", landlock_abi, 0, 64, IPC_OPT),
	IPC_F_STRV(ipc_start, "hide_paths", hide_paths, 16, IPC_OPT | IPC_ABS),
};
static const struct ipc_schema start_schema =
	SCHEMA("START", ipc_start, start_fields, start_check);

static const struct ipc_field execute_fields[] = {
	IPC_F_TEXT(ipc_execute, "code", code, IPC_TEXT_MAX, IPC_REQ),
	IPC_F_DOUBLE(ipc_execute, "timeout_s", timeout_s, 0, 1e9, IPC_REQ),
	IPC_F_BOOL(ipc_execute, "silent", silent, IPC_OPT),
	IPC_F_U64(ipc_execute, "output_limit", output_limit, 0, INT_MAX, IPC_OPT),
	IPC_F_U64(ipc_execute, "rich_limit", rich_limit, 0, INT_MAX, IPC_OPT),
	IPC_F_U64(ipc_execute, "inline_limit", inline_limit, 0, INT_MAX, IPC_OPT),
	IPC_F_BOOL(ipc_execute, "binary_files", binary_files, IPC_OPT),
	IPC_F_DOUBLE(ipc_execute, "rescue_s", rescue_s, 0, 3600, IPC_OPT),
	IPC_F_BOOL(ipc_execute, "stream", stream, IPC_OPT),
	IPC_F_BOOL(ipc_execute, "stdin", allow_stdin, IPC_OPT),
	IPC_F_STRV(ipc_execute, "allow_mime", allow_mime, IPC_VEC_MAX, IPC_OPT),
};
static const struct ipc_schema execute_schema =
	SCHEMA("EXECUTE", ipc_execute, execute_fields, NULL);

static const struct ipc_field ready_fields[] = {
	/* 0 and 1 are never a worker's child */
	IPC_F_INT(ipc_ready, "kernel_pid", kernel_pid, 2, INT_MAX, IPC_REQ),
	IPC_F_STR(ipc_ready, "language", language, 200, IPC_REQ),
	IPC_F_BOOL(ipc_ready, "restarted", restarted, IPC_REQ),
	IPC_F_STR(ipc_ready, "language_version", language_version, 200, IPC_OPT),
};
static const struct ipc_schema ready_schema = SCHEMA("READY", ipc_ready, ready_fields, NULL);

static const struct ipc_field output_fields[] = {
	IPC_F_ENUM(ipc_output, "name", name, stream_names, IPC_REQ),
	IPC_F_TEXT(ipc_output, "text", text, IPC_TEXT_MAX, IPC_REQ),
};
static const struct ipc_schema output_schema = SCHEMA("OUTPUT", ipc_output, output_fields, NULL);

static const struct ipc_field streaming_fields[] = {
	IPC_F_TEXT(ipc_streaming, "stdout", out, IPC_TEXT_MAX, IPC_OPT),
	IPC_F_TEXT(ipc_streaming, "stderr", err, IPC_TEXT_MAX, IPC_OPT),
};
static const struct ipc_schema streaming_schema =
	SCHEMA("STREAMING", ipc_streaming, streaming_fields, NULL);

static int rich_check(const void *msg, char *why, size_t why_len);

static const struct ipc_field rich_fields[] = {
	IPC_F_STR(ipc_rich, "mime_type", mime_type, 255, IPC_REQ | IPC_NONEMPTY),
	IPC_F_JSON(ipc_rich, "data", data, IPC_OPT),
	IPC_F_STR(ipc_rich, "file", file, 4096, IPC_OPT | IPC_NONEMPTY),
	IPC_F_U64(ipc_rich, "size_bytes", size_bytes, 0, UINT64_MAX >> 11, IPC_OPT),
	IPC_F_STR(ipc_rich, "sha256", sha256, 64, IPC_OPT),
};
static const struct ipc_schema rich_schema =
	SCHEMA("rich output", ipc_rich, rich_fields, rich_check);

static const struct ipc_field error_fields[] = {
	IPC_F_TEXT(ipc_exec_error, "type", type, 4096, IPC_REQ),
	IPC_F_TEXT(ipc_exec_error, "message", message, IPC_TEXT_MAX, IPC_REQ),
	IPC_F_TEXT(ipc_exec_error, "traceback", traceback, IPC_TEXT_MAX, IPC_REQ),
};
static const struct ipc_schema error_schema = SCHEMA("error", ipc_exec_error, error_fields, NULL);

static const struct ipc_field lost_fields[] = {
	IPC_F_U64(ipc_output_lost, "messages", messages, 0, UINT64_MAX >> 11, IPC_OPT),
	IPC_F_U64(ipc_output_lost, "bytes", bytes, 0, UINT64_MAX >> 11, IPC_OPT),
	IPC_F_TEXT(ipc_output_lost, "reason", reason, 4096, IPC_REQ),
};
static const struct ipc_schema lost_schema =
	SCHEMA("output_lost", ipc_output_lost, lost_fields, NULL);

int
ipc_artifact_name_ok(const char *n)
{
	if (n[0] == '/' || n[0] == '\0')
		return 0;
	for (const char *p = n; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 2 && p[0] == '.' && p[1] == '.') ||
		    (len == 1 && p[0] == '.'))
			return 0;
		p += len;
		if (*p == '/')
			p++;
		if (*p == '\0' && p[-1] == '/')
			return 0;
	}
	return 1;
}

/* A rich output has its data or its file, and a file its sha256. */
static int
rich_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_rich *r = msg;

	if (r->data == NULL && r->file == NULL)
		return err_set(why, why_len, "a rich output needs data or file");
	if (r->file && !ipc_artifact_name_ok(r->file))
		return err_set(why, why_len, "file must be a relative path without . or ..");
	if ((r->file == NULL) != (r->sha256 == NULL) || (r->sha256 && !hex_is(r->sha256, 64)))
		return err_set(why, why_len, "file needs sha256, 64 lower-case hex digits");
	return 0;
}

static int
artifact_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_artifact *a = msg;

	if (!ipc_artifact_name_ok(a->name))
		return err_set(why, why_len, "name must be a relative path without . or ..");
	return 0;
}

static const struct ipc_field artifact_fields[] = {
	IPC_F_STR(ipc_artifact, "name", name, 4096, IPC_REQ | IPC_NONEMPTY),
	IPC_F_U64(ipc_artifact, "size_bytes", size_bytes, 0, UINT64_MAX >> 11, IPC_REQ),
	IPC_F_STR(ipc_artifact, "mime_type", mime_type, 255, IPC_REQ | IPC_NONEMPTY),
	IPC_F_STR(ipc_artifact, "modified_at", modified_at, 40, IPC_REQ | IPC_NONEMPTY),
};
static const struct ipc_schema artifact_schema =
	SCHEMA("artifact", ipc_artifact, artifact_fields, artifact_check);

static const struct ipc_field result_fields[] = {
	IPC_F_BOOL(ipc_result, "success", success, IPC_REQ),
	IPC_F_TEXT(ipc_result, "stdout", out, IPC_TEXT_MAX, IPC_REQ),
	IPC_F_TEXT(ipc_result, "stderr", err, IPC_TEXT_MAX, IPC_REQ),
	IPC_F_LIST(ipc_result, "rich_outputs", rich, n_rich, 100000, rich_schema, IPC_REQ),
	IPC_F_OBJ(ipc_result, "error", error, error_schema, IPC_REQ | IPC_NULL),
	IPC_F_DOUBLE(ipc_result, "execution_time", execution_time, 0, 1e9, IPC_REQ),
	IPC_F_BOOL(ipc_result, "kernel_restarted", kernel_restarted, IPC_REQ),
	IPC_F_OBJ(ipc_result, "output_lost", output_lost, lost_schema, IPC_OPT),
	IPC_F_JSON(ipc_result, "value", value, IPC_OPT),
	IPC_F_STRV(ipc_result, "dropped_mime", dropped_mime, IPC_DROPPED_MAX, IPC_OPT),
	IPC_F_U64(ipc_result, "spill_files", spill_files, 0, 1000000, IPC_OPT),
	IPC_F_LIST(ipc_result, "artifacts", artifacts, n_artifacts, IPC_FILES_MAX,
		   artifact_schema, IPC_OPT),
	IPC_F_BOOL(ipc_result, "artifacts_truncated", artifacts_truncated, IPC_OPT),
	IPC_F_U64(ipc_result, "stdout_streamed", out_streamed, 0, IPC_TEXT_MAX, IPC_OPT),
	IPC_F_U64(ipc_result, "stderr_streamed", err_streamed, 0, IPC_TEXT_MAX, IPC_OPT),
	IPC_F_DOUBLE(ipc_result, "stdin_wait_s", stdin_wait_s, 0, 1e9, IPC_OPT),
};
static const struct ipc_schema result_schema = SCHEMA("RESULT", ipc_result, result_fields, NULL);

static int
kernel_died_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_kernel_died *d = msg;

	if (d->signal && d->exit_code)
		return err_set(why, why_len, "exit_code and signal exclude each other");
	return 0;
}

static const struct ipc_field kernel_died_fields[] = {
	IPC_F_INT(ipc_kernel_died, "pid", pid, 2, INT_MAX, IPC_REQ),
	IPC_F_INT(ipc_kernel_died, "exit_code", exit_code, 0, 255, IPC_OPT),
	IPC_F_INT(ipc_kernel_died, "signal", signal, 1, 127, IPC_OPT),
	IPC_F_TEXT(ipc_kernel_died, "message", message, IPC_TEXT_MAX, IPC_REQ),
	IPC_F_BOOL(ipc_kernel_died, "memory_limit_exceeded", memory_limit_exceeded, IPC_OPT),
};
static const struct ipc_schema kernel_died_schema =
	SCHEMA("KERNEL_DIED", ipc_kernel_died, kernel_died_fields, kernel_died_check);

static const struct ipc_field log_fields[] = {
	IPC_F_INT(ipc_log, "priority", priority, 0, 7, IPC_REQ),
	IPC_F_TEXT(ipc_log, "message", message, IPC_TEXT_MAX, IPC_REQ),
};
static const struct ipc_schema log_schema = SCHEMA("LOG", ipc_log, log_fields, NULL);

static const struct ipc_field start_failed_fields[] = {
	IPC_F_TEXT(ipc_start_failed, "message", message, IPC_TEXT_MAX, IPC_REQ),
};
static const struct ipc_schema start_failed_schema =
	SCHEMA("START_FAILED", ipc_start_failed, start_failed_fields, NULL);

static int
file_open_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_file_open *o = msg;

	/* The worker refuses such paths too; a supervisor never asks for them. */
	if (!ipc_artifact_name_ok(o->path))
		return err_set(why, why_len, "path must be relative, without . or ..");
	return 0;
}

static const struct ipc_field file_open_fields[] = {
	IPC_F_STR(ipc_file_open, "path", path, 4096, IPC_REQ | IPC_NONEMPTY),
};
static const struct ipc_schema file_open_schema =
	SCHEMA("FILE_OPEN", ipc_file_open, file_open_fields, file_open_check);

static int
file_write_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_file_write *w = msg;

	if (!ipc_artifact_name_ok(w->path))
		return err_set(why, why_len, "path must be relative, without . or ..");
	return 0;
}

static const struct ipc_field file_write_fields[] = {
	IPC_F_STR(ipc_file_write, "path", path, 4096, IPC_REQ | IPC_NONEMPTY),
	IPC_F_TEXT(ipc_file_write, "data", data, IPC_TEXT_MAX, IPC_REQ),
	IPC_F_U32(ipc_file_write, "mode", mode, 0, 0755, IPC_REQ),
};
static const struct ipc_schema file_write_schema =
	SCHEMA("FILE_WRITE", ipc_file_write, file_write_fields, file_write_check);

static const struct ipc_field files_fields[] = {
	IPC_F_LIST(ipc_files, "files", files, n_files, IPC_FILES_MAX, artifact_schema, IPC_REQ),
	IPC_F_BOOL(ipc_files, "truncated", truncated, IPC_OPT),
};
static const struct ipc_schema files_schema = SCHEMA("FILES", ipc_files, files_fields, NULL);

static int
file_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_file *f = msg;

	if ((f->error.len > 0) == (f->file != NULL))
		return err_set(why, why_len, "exactly one of error and file");
	return 0;
}

static const struct ipc_field file_fields[] = {
	IPC_F_TEXT(ipc_file, "error", error, 4096, IPC_OPT),
	IPC_F_OBJ(ipc_file, "file", file, artifact_schema, IPC_OPT),
};
static const struct ipc_schema file_schema =
	SCHEMA("FILE", ipc_file, file_fields, file_check);

static const struct ipc_field waiting_fields[] = {
	IPC_F_DOUBLE(ipc_waiting, "seconds", seconds, 0, 86400, IPC_REQ),
};
static const struct ipc_schema waiting_schema = SCHEMA("WAITING", ipc_waiting, waiting_fields, NULL);

static const struct ipc_field resumed_fields[] = {
	IPC_F_INT(ipc_resumed, "kernel_pid", kernel_pid, 0, INT_MAX, IPC_REQ),
	IPC_F_BOOL(ipc_resumed, "state_lost", state_lost, IPC_REQ),
};
static const struct ipc_schema resumed_schema = SCHEMA("RESUMED", ipc_resumed, resumed_fields, NULL);

/* A prompt is one line of a terminal, not a document. */
#define IPC_PROMPT_MAX 4096

static const struct ipc_field input_request_fields[] = {
	IPC_F_TEXT(ipc_input_request, "prompt", prompt, IPC_PROMPT_MAX, IPC_OPT),
};
static const struct ipc_schema input_request_schema =
	SCHEMA("INPUT_REQUEST", ipc_input_request, input_request_fields, NULL);

static int
input_reply_check(const void *msg, char *why, size_t why_len)
{
	const struct ipc_input_reply *r = msg;

	if (r->eof + r->cancel + (r->value.len > 0) > 1)
		return err_set(why, why_len, "value, eof and cancel exclude each other");
	return 0;
}

static const struct ipc_field input_reply_fields[] = {
	IPC_F_TEXT(ipc_input_reply, "value", value, IPC_TEXT_MAX, IPC_OPT),
	IPC_F_BOOL(ipc_input_reply, "eof", eof, IPC_OPT),
	IPC_F_BOOL(ipc_input_reply, "cancel", cancel, IPC_OPT),
};
static const struct ipc_schema input_reply_schema =
	SCHEMA("INPUT_REPLY", ipc_input_reply, input_reply_fields, input_reply_check);

/* A kernel's request is a tool call's arguments: 1 MiB is a document. */
#define IPC_UPSTREAM_MAX (1024 * 1024)

static const struct ipc_field upstream_call_fields[] = {
	IPC_F_INT(ipc_upstream_call, "seq", seq, 1, INT_MAX, IPC_REQ),
	IPC_F_TEXT(ipc_upstream_call, "request", request, IPC_UPSTREAM_MAX, IPC_REQ),
};
static const struct ipc_schema upstream_call_schema =
	SCHEMA("UPSTREAM_CALL", ipc_upstream_call, upstream_call_fields, NULL);

static const struct ipc_field upstream_reply_fields[] = {
	IPC_F_INT(ipc_upstream_reply, "seq", seq, 1, INT_MAX, IPC_REQ),
	IPC_F_TEXT(ipc_upstream_reply, "reply", reply, IPC_TEXT_MAX, IPC_REQ),
};
static const struct ipc_schema upstream_reply_schema =
	SCHEMA("UPSTREAM_REPLY", ipc_upstream_reply, upstream_reply_fields, NULL);

/* The schema of each message type; NULL for the types without fields. */
static const struct ipc_schema *const schemas[] = {
	[IPC_START] = &start_schema,
	[IPC_EXECUTE] = &execute_schema,
	[IPC_READY] = &ready_schema,
	[IPC_OUTPUT] = &output_schema,
	[IPC_RESULT] = &result_schema,
	[IPC_KERNEL_DIED] = &kernel_died_schema,
	[IPC_LOG] = &log_schema,
	[IPC_START_FAILED] = &start_failed_schema,
	[IPC_STREAMING] = &streaming_schema,
	[IPC_FILE_OPEN] = &file_open_schema,
	[IPC_FILE_WRITE] = &file_write_schema,
	[IPC_FILES] = &files_schema,
	[IPC_FILE] = &file_schema,
	[IPC_WAITING] = &waiting_schema,
	[IPC_RESUMED] = &resumed_schema,
	[IPC_INPUT_REQUEST] = &input_request_schema,
	[IPC_INPUT_REPLY] = &input_reply_schema,
	[IPC_UPSTREAM_CALL] = &upstream_call_schema,
	[IPC_UPSTREAM_REPLY] = &upstream_reply_schema,
};

const struct ipc_schema *
ipc_schema_of(unsigned type)
{
	return type < sizeof(schemas) / sizeof(schemas[0]) ? schemas[type] : NULL;
}

size_t
ipc_msg_size(unsigned type)
{
	const struct ipc_schema *s = ipc_schema_of(type);
	return s ? s->size : 0;
}

/* ---- Freeing ---- */

/* A view (ipc_msg_view) owns its objects, lists and vectors, not what they point to. */
static void
free_field(const struct ipc_field *f, char *at, int view)
{
	switch (f->kind) {
	case IPC_K_STR:
		if (!view)
			free(*(char **)at);
		break;
	case IPC_K_TEXT:
		if (!view)
			free(((struct ipc_text *)at)->s);
		break;
	case IPC_K_STRV:
		if (view)
			free(*(char ***)at);
		else
			strv_free(*(char ***)at);
		break;
	case IPC_K_ENV: /* "NAME=value" is made, never borrowed */
		strv_free(*(char ***)at);
		break;
	case IPC_K_OBJ:
		if (*(void **)at) {
			ipc_schema_free(f->sub, *(void **)at, view);
			free(*(void **)at);
		}
		break;
	case IPC_K_LIST: {
		char *items = *(char **)at;
		size_t n = *(size_t *)((char *)at - f->off + f->count_off);
		for (size_t i = 0; items && i < n; i++)
			ipc_schema_free(f->sub, items + i * f->sub->size, view);
		free(items);
		break;
	}
	case IPC_K_JSON:
		if (!view)
			json_object_put(*(struct json_object **)at);
		break;
	default:
		break;
	}
}

void
ipc_schema_free(const struct ipc_schema *s, void *msg, int view)
{
	for (size_t i = 0; i < s->nfields; i++)
		free_field(&s->fields[i], (char *)msg + s->fields[i].off, view);
	memset(msg, 0, s->size);
}

void
ipc_msg_free(unsigned type, void *msg)
{
	const struct ipc_schema *s = ipc_schema_of(type);

	if (s && msg)
		ipc_schema_free(s, msg, 0);
}

void
ipc_msg_view_free(unsigned type, void *msg)
{
	const struct ipc_schema *s = ipc_schema_of(type);

	if (s && msg)
		ipc_schema_free(s, msg, 1);
}

/* ---- Helpers ---- */

void
ipc_cgroup_from_layout(struct ipc_cgroup *out, struct ipc_cgroup_ctl ctl[CGROUP_NCTL],
		       const struct cgroup_layout *l, const char *name)
{
	struct ipc_cgroup_ctl **slot[CGROUP_NCTL] = {&out->memory, &out->pids, &out->cpu,
						   &out->freezer};

	memset(out, 0, sizeof(*out));
	out->name = (char *)name;
	for (int c = 0; c < CGROUP_NCTL; c++) {
		if (l->version[c] == 0)
			continue;
		ctl[c].version = l->version[c];
		ctl[c].parent = l->parent[c];
		*slot[c] = &ctl[c];
	}
}

void
ipc_cgroup_to_layout(const struct ipc_cgroup *c, struct cgroup_layout *l)
{
	const struct ipc_cgroup_ctl *ctl[CGROUP_NCTL] = {c->memory, c->pids, c->cpu, c->freezer};

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < CGROUP_NCTL; i++) {
		if (ctl[i] == NULL)
			continue;
		l->version[i] = ctl[i]->version;
		l->parent[i] = xstrdup(ctl[i]->parent);
	}
}

struct ipc_text
ipc_text_of(const char *s)
{
	struct ipc_text t = {(char *)s, s ? strlen(s) : 0};
	return t;
}
