/* resources.c - see resources.h. */
#include "autoconf.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "b64.h"
#include "buf.h"
#include "config.h"
#include "json_member.h"
#include "mime.h"
#include "pool.h"
#include "resources.h"
#include "session.h"
#include "sfiles.h"
#include "uri.h"
#include "xmalloc.h"

#define URI_SCHEME URI_SESSION
#define URI_TEMPLATE URI_SCHEME "{session_id}/outputs/{path}"

#define ERR_PARAMS -32602
#define ERR_INTERNAL -32603

int
resources_method(const char *method)
{
	return strcmp(method, "resources/list") == 0 ||
	       strcmp(method, "resources/templates/list") == 0 ||
	       strcmp(method, "resources/read") == 0;
}

static struct json_object *
fail(int *code, char *msg, size_t msg_len, int c, const char *text)
{
	*code = c;
	snprintf(msg, msg_len, "%s", text);
	return NULL;
}

/* The path a URI's encoded path stands for (caller frees); NULL if it holds a NUL. */
static char *
path_of(const char *encoded)
{
	int len = 0;
	char *d = curl_easy_unescape(NULL, encoded, 0, &len);

	if (d == NULL)
		return NULL;
	char *p = strlen(d) == (size_t)len ? xstrdup(d) : NULL;
	curl_free(d);
	return p;
}

/* The resource of file f (a FILES item) of session `id`. */
static struct json_object *
resource_of(const char *id, struct json_object *f)
{
	struct json_object *r = json_object_new_object();
	char *uri = uri_session_file(id, json_member_str(f, "name"));

	json_object_object_add(r, "uri", json_object_new_string(uri));
	json_object_object_add(r, "name", json_object_get(json_object_object_get(f, "name")));
	json_object_object_add(r, "mimeType",
			       json_object_get(json_object_object_get(f, "mime_type")));
	json_object_object_add(r, "size", json_object_get(json_object_object_get(f, "size_bytes")));
	free(uri);
	return r;
}

/* resources/list: the caller's outputs/, RESOURCES_PAGE at a time. */
static struct json_object *
do_list(struct session *s, struct json_object *params, int *code, char *msg, size_t msg_len)
{
	struct json_object *cur = NULL, *files;
	char why[ERR_LEN];
	size_t start = 0;

	if (json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, "cursor", &cur) && cur != NULL) {
		const char *c = json_object_get_string(cur);
		char *end;
		errno = 0;
		unsigned long v = json_object_is_type(cur, json_type_string) ? strtoul(c, &end, 10)
									     : 0;
		if (!json_object_is_type(cur, json_type_string) || c[0] == '\0' || *end != '\0' ||
		    errno != 0)
			return fail(code, msg, msg_len, ERR_PARAMS, "invalid cursor");
		start = (size_t)v;
	}
	struct json_object *all = sfiles_list(s, why, sizeof(why));
	if (all == NULL)
		return fail(code, msg, msg_len, ERR_INTERNAL, why);
	json_object_object_get_ex(all, "files", &files);
	size_t n = json_object_array_length(files);
	struct json_object *list = json_object_new_array();
	for (size_t i = start; i < n && i < start + RESOURCES_PAGE; i++)
		json_object_array_add(list, resource_of(s->id, json_object_array_get_idx(files, i)));
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "resources", list);
	if (start + RESOURCES_PAGE < n) {
		char next[32];
		snprintf(next, sizeof(next), "%zu", start + RESOURCES_PAGE);
		json_object_object_add(r, "nextCursor", json_object_new_string(next));
	}
	json_object_put(all);
	return r;
}

static struct json_object *
do_templates(void)
{
	struct json_object *r = json_object_new_object(), *list = json_object_new_array();
	struct json_object *t = json_object_new_object();

	json_object_object_add(t, "uriTemplate", json_object_new_string(URI_TEMPLATE));
	json_object_object_add(t, "name", json_object_new_string("session-output"));
	json_object_object_add(t, "description",
			       json_object_new_string("A file the code of a session wrote under "
						      "outputs/ ($CODEEXECD_OUTPUT_DIR)."));
	json_object_array_add(list, t);
	json_object_object_add(r, "resourceTemplates", list);
	return r;
}

/* Read all of fd, at most max bytes (*len). NULL with errno, or EFBIG when larger. */
static char *
read_all(int fd, size_t max, size_t *len)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return NULL;
	if ((uint64_t)st.st_size > max) {
		errno = EFBIG;
		return NULL;
	}
	char *b = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shrank meanwhile: what is there */
		got += (size_t)n;
	}
	b[got] = '\0';
	*len = got;
	return b;
}

/* Whether b[len] is text a JSON string can hold as it is: UTF-8 without NUL. */
static int
is_text(const char *b, size_t len)
{
	if (memchr(b, '\0', len))
		return 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)b[i];
		size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (n == 0 || i + n > len)
			return 0;
		for (size_t k = 1; k < n; k++)
			if ((b[i + k] & 0xc0) != 0x80)
				return 0;
		i += n;
	}
	return 1;
}

/* The session and path (caller frees) a URI of ours names; NULL when it is not one. */
static struct session *
uri_target(struct session *caller, const char *uri, char **path)
{
	char id[SESSION_ID_LEN + 1];

	*path = NULL;
	if (strncmp(uri, URI_SCHEME, strlen(URI_SCHEME)) != 0)
		return NULL;
	const char *p = uri + strlen(URI_SCHEME);
	const char *slash = strchr(p, '/');
	if (slash == NULL || slash == p || (size_t)(slash - p) > SESSION_ID_LEN ||
	    strncmp(slash, "/outputs/", 9) != 0)
		return NULL;
	memcpy(id, p, (size_t)(slash - p));
	id[slash - p] = '\0';
	if ((*path = path_of(slash + 9)) == NULL)
		return NULL;
	struct session *t = session_get(id);
	/*
	 * As list_sessions sees them: anonymous callers only their own
	 * session. A 2026-07-28 caller has none (transient): for it the URI's
	 * session id is what execution_session_id is to a tool, the
	 * capability, so the rule of tools applies (the same identity).
	 */
	if (t && !(caller->transient ? session_may_use(caller, t) : session_visible(caller, t))) {
		session_put(t);
		return NULL;
	}
	return t;
}

/* The contents item of a file read whole. */
static struct json_object *
contents_of(const char *uri, const char *mime, char *b, size_t len)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "uri", json_object_new_string(uri));
	json_object_object_add(c, "mimeType", json_object_new_string(mime));
	if (mime_is_text(mime) && is_text(b, len)) {
		json_object_object_add(c, "text", json_object_new_string_len(b, (int)len));
	} else {
		char *enc = b64_encode(b, len, B64_STD);
		json_object_object_add(c, "blob", json_object_new_string(enc));
		free(enc);
	}
	return c;
}

/* resources/read: one file, text or base64, at most resource_max_bytes. */
static struct json_object *
do_read(const struct config *cfg, struct session *s, struct json_object *params, int *code,
	char *msg, size_t msg_len)
{
	struct json_object *u, *info;
	char *path = NULL;
	char why[ERR_LEN];
	enum sfiles_err ferr;
	size_t len = 0;

	if (!json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "uri", &u) ||
	    !json_object_is_type(u, json_type_string))
		return fail(code, msg, msg_len, ERR_PARAMS, "resources/read needs params.uri");
	const char *uri = json_object_get_string(u);
	struct session *t = uri_target(s, uri, &path);
	if (t == NULL) {
		free(path);
		return fail(code, msg, msg_len, RESOURCES_NOT_FOUND, "Resource not found");
	}
	int fd = sfiles_open(t, path, &info, &ferr, why, sizeof(why));
	session_put(t);
	if (fd == -1) {
		free(path);
		return ferr == SFILES_REFUSED
			       ? fail(code, msg, msg_len, RESOURCES_NOT_FOUND, "Resource not found")
			       : fail(code, msg, msg_len, ERR_INTERNAL, why);
	}
	pool_unlock();
	char *b = read_all(fd, (size_t)cfg->resource_max_bytes, &len);
	int saved = errno;
	pool_lock();
	close(fd);
	struct json_object *r = NULL;
	if (b == NULL && saved == EFBIG) {
		snprintf(why, sizeof(why), "%s is larger than resource_max_bytes (%d)", path,
			 cfg->resource_max_bytes);
		fail(code, msg, msg_len, ERR_INTERNAL, why);
	} else if (b == NULL) {
		snprintf(why, sizeof(why), "read %s: %s", path, strerror(saved));
		fail(code, msg, msg_len, ERR_INTERNAL, why);
	} else {
		r = json_object_new_object();
		struct json_object *list = json_object_new_array();
		json_object_array_add(list, contents_of(uri, json_member_str(info, "mime_type"), b,
							len));
		json_object_object_add(r, "contents", list);
	}
	free(b);
	free(path);
	json_object_put(info);
	return r;
}

struct json_object *
resources_handle(const struct config *cfg, struct session *s, const char *method,
		 struct json_object *params, int *code, char *msg, size_t msg_len)
{
	if (strcmp(method, "resources/list") == 0)
		return do_list(s, params, code, msg, msg_len);
	if (strcmp(method, "resources/templates/list") == 0)
		return do_templates();
	return do_read(cfg, s, params, code, msg, msg_len);
}
