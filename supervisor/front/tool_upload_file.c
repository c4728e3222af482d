/*
 * tool_upload_file.c - {name}_upload_file: put a file the client gives
 * (base64, or a data: URI) below the session's working directory. The
 * front decodes and weighs it and takes its sha256; the worker writes it
 * as the kernel's identity, atomically, refusing what FILE_OPEN refuses
 * on the way (sfiles.h, worker/outputs.h).
 */
#include "autoconf.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "config.h"
#include "ipc_msg.h"
#include "json_member.h"
#include "log.h"
#include "session.h"
#include "sfiles.h"
#include "sha256.h"
#include "tools.h"
#include "xmalloc.h"

/* mode when none is given: what a file written by the kernel would have */
#define UPLOAD_MODE 0644

static int
upload_listed(const struct config *cfg)
{
	return cfg->max_upload_bytes > 0;
}

static void
upload_describe(const struct config *cfg, struct json_object *tool)
{
	char desc[700], schema[1200], file[80] = "";

	snprintf(desc, sizeof(desc),
		 "Write a file into the session's working directory (the code's current "
		 "directory), atomically, and get its size and sha256. Give its bytes as "
		 "content (base64) or as data_uri (an RFC 2397 data: URI), one of the two; at "
		 "most %d bytes. path is relative; absolute paths, .., links and devices are "
		 "refused. mode is octal, within 0755 (default 0644).%s",
		 cfg->max_upload_bytes,
		 cfg->files_extension ? " data_uri is a file input (x-mcp-file); without path, "
					"the file is named by the URI's name= parameter."
				      : "");
	json_object_object_add(tool, "description", json_object_new_string(desc));
	/* The draft files extension: the client may put a file it holds there. */
	if (cfg->files_extension)
		snprintf(file, sizeof(file), ",\"x-mcp-file\":{\"maxSize\":%d}",
			 cfg->max_upload_bytes);
	snprintf(schema, sizeof(schema),
		 "{\"type\":\"object\",\"properties\":{"
		 "\"path\":{\"type\":\"string\",\"description\":\"Where, relative to the "
		 "working directory, as data/input.csv\"},"
		 "\"content\":{\"type\":\"string\",\"description\":\"The bytes, base64\"},"
		 "\"data_uri\":{\"type\":\"string\",\"format\":\"uri\",\"description\":"
		 "\"The bytes as a data: URI, as data:text/csv;base64,...\"%s},"
		 "\"mode\":{\"type\":\"string\",\"description\":\"Octal permission bits, as "
		 "0755; setuid, setgid, sticky and group or other write are dropped\"}}%s}",
		 file, cfg->files_extension ? "" : ",\"required\":[\"path\"]");
	json_object_object_add(tool, "inputSchema", tool_schema(schema));
	json_object_object_add(
		tool, "outputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"path\":{\"type\":\"string\"},\"size_bytes\":{\"type\":\"integer\"},"
			    "\"sha256\":{\"type\":\"string\"},\"mime_type\":{\"type\":\"string\"},"
			    "\"mode\":{\"type\":\"string\"},\"modified_at\":{\"type\":\"string\"},"
			    "\"error\":{\"type\":\"object\",\"properties\":{"
			    "\"type\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}}}}}"));
}

/*
 * The name= parameter of data: URI `uri` (SEP-2356's named data URIs),
 * percent-decoded (caller frees), or NULL when it has none.
 */
static char *
data_uri_name(const char *uri)
{
	const char *comma = strchr(uri, ',');
	const char *meta_end = comma ? comma : uri + strlen(uri);
	const char *p = strstr(uri, ";name=");

	if (p == NULL || p >= meta_end)
		return NULL;
	const char *v = p + 6, *end = v;
	while (end < meta_end && *end != ';')
		end++;
	int n = 0;
	char *d = curl_easy_unescape(NULL, v, (int)(end - v), &n);
	/* A NUL inside would cut the name short: no name then. */
	char *name = d && n > 0 && memchr(d, '\0', (size_t)n) == NULL ? xstrdup(d) : NULL;
	curl_free(d);
	return name;
}

/*
 * The bytes of data: URI `uri` (RFC 2397) into *out (caller frees). 0, or
 * -1 with why[why_len].
 */
static int
data_uri_bytes(const char *uri, unsigned char **out, size_t *len, char *why, size_t why_len)
{
	if (strncmp(uri, "data:", 5) != 0)
		return err_set(why, why_len, "data_uri must start with data:");
	const char *comma = strchr(uri, ',');
	if (comma == NULL)
		return err_set(why, why_len, "data_uri has no comma before its data");
	size_t meta = (size_t)(comma - uri);
	if (meta >= 7 && strncmp(comma - 7, ";base64", 7) == 0) {
		if (b64_decode(comma + 1, strlen(comma + 1), B64_STD, out, len) == -1)
			return err_set(why, why_len, "data_uri's data is not base64");
		return 0;
	}
	int n = 0;
	char *d = curl_easy_unescape(NULL, comma + 1, 0, &n);
	if (d == NULL)
		return err_set(why, why_len, "data_uri's data cannot be decoded");
	*out = xmalloc((size_t)n + 1);
	memcpy(*out, d, (size_t)n + 1);
	*len = (size_t)n;
	curl_free(d);
	return 0;
}

/* The mode argument, masked to 0755; -1 when it is not an octal string. */
static long
mode_of(const char *s)
{
	char *end;

	if (s == NULL)
		return UPLOAD_MODE;
	errno = 0;
	long m = strtol(s, &end, 8);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || m < 0 || m > 07777)
		return -1;
	return m & 0755;
}

/* The upload's bytes from content or data_uri, exactly one; NULL after tool_bad_params. */
static unsigned char *
upload_bytes(struct tool_call *tc, size_t *len)
{
	struct json_object *c = json_object_object_get(tc->args, "content");
	struct json_object *u = json_object_object_get(tc->args, "data_uri");
	unsigned char *out = NULL;
	char why[ERR_LEN];

	if ((c != NULL) == (u != NULL)) {
		tool_bad_params(tc, "give exactly one of content and data_uri");
		return NULL;
	}
	const char *s = tool_arg_string(tc, c ? "content" : "data_uri");
	if (s == NULL) {
		tool_bad_params(tc, c ? "content must be a string" : "data_uri must be a string");
		return NULL;
	}
	if (c && b64_decode(s, strlen(s), B64_STD, &out, len) == -1) {
		tool_bad_params(tc, "content must be base64 (the standard alphabet, padded)");
		return NULL;
	}
	if (u && data_uri_bytes(s, &out, len, why, sizeof(why)) == -1) {
		tool_bad_params(tc, why);
		return NULL;
	}
	return out;
}

/* The answer to a written file: its info, sha256 and mode. */
static struct json_object *
written(struct json_object *info, const unsigned char *bytes, size_t len, long mode)
{
	char hex[SHA256_HEX_LEN + 1], m[8];
	struct json_object *o = json_object_new_object();

	sha256_hex(bytes, len, hex); /* "" in the answer if OpenSSL fails, as before */
	snprintf(m, sizeof(m), "%04lo", mode);
	json_member_share(o, "path", info, "name");
	json_member_share(o, "size_bytes", info, "size_bytes");
	json_object_object_add(o, "sha256", json_object_new_string(hex));
	json_member_share(o, "mime_type", info, "mime_type");
	json_object_object_add(o, "mode", json_object_new_string(m));
	json_member_share(o, "modified_at", info, "modified_at");
	return tool_result(o, NULL, 0);
}

/* upload_call once the file's path is known. */
static struct json_object *
upload_path(struct tool_call *tc, const char *path, struct json_object *mv, char *why,
	    size_t why_len)
{
	size_t len = 0;

	long mode = mode_of(mv ? tool_arg_string(tc, "mode") : NULL);
	if (mode == -1 || (mv && !json_object_is_type(mv, json_type_string)))
		return tool_bad_params(tc, "mode must be an octal string, as 0644");
	unsigned char *bytes = upload_bytes(tc, &len);
	if (bytes == NULL)
		return NULL;
	if (len > (size_t)tc->cfg->max_upload_bytes) {
		snprintf(why, why_len, "%s: %zu bytes exceed max_upload_bytes (%d)", path, len,
			 tc->cfg->max_upload_bytes);
		free(bytes);
		return tool_error("TooLarge", why);
	}
	/* Sent clean: the worker's decoder is as strict as ours. */
	char *b64 = b64_encode(bytes, len, B64_STD);
	struct ipc_file_write wr = {
		.path = (char *)path, .data = ipc_text_of(b64), .mode = (uint32_t)mode};
	struct json_object *info, *r;
	enum sfiles_err ferr;
	if (sfiles_write(tc->session, &wr, &info, &ferr, why, why_len) == -1) {
		log_warnx("session %.8s: upload of %s failed: %s", tc->session->id, path, why);
		r = tool_error(ferr == SFILES_REFUSED ? "Refused" : "WorkerFailed", why);
	} else {
		log_info("session %.8s: uploaded %s (%zu bytes)", tc->session->id, path, len);
		r = written(info, bytes, len, mode);
		json_object_put(info);
	}
	free(b64);
	free(bytes);
	return r;
}

static struct json_object *
upload_call(struct tool_call *tc)
{
	const char *path = tool_arg_string(tc, "path");
	struct json_object *mv = json_object_object_get(tc->args, "mode");
	char why[ERR_LEN];
	char *named = NULL;

	/* A file input of the files extension names itself (name=). */
	if (path == NULL && tc->cfg->files_extension &&
	    json_object_object_get(tc->args, "path") == NULL &&
	    tool_arg_string(tc, "data_uri") != NULL)
		path = named = data_uri_name(tool_arg_string(tc, "data_uri"));
	if (path == NULL)
		return tool_bad_params(tc, tc->cfg->files_extension
						   ? "path must be a string, or data_uri name the "
						     "file (;name=)"
						   : "path must be a string");
	struct json_object *r = upload_path(tc, path, mv, why, sizeof(why));
	free(named);
	return r;
}

const struct tool tool_upload_file = {
	.name_format = "{name}_upload_file",
	.describe = upload_describe,
	.listed = upload_listed,
	.in_session = 1,
	.call = upload_call,
};
