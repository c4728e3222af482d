/* result.c - see result.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_member.h"
#include "result.h"
#include "uri.h"

struct json_object *
result_failed(const char *type, const char *message)
{
	struct json_object *r = json_object_new_object();
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(e, "traceback", json_object_new_string(""));
	json_object_object_add(r, "success", json_object_new_boolean(0));
	json_object_object_add(r, "stdout", json_object_new_string(""));
	json_object_object_add(r, "stderr", json_object_new_string(""));
	json_object_object_add(r, "rich_outputs", json_object_new_array());
	json_object_object_add(r, "error", e);
	json_object_object_add(r, "execution_time", json_object_new_double(0));
	return r;
}

/* Append `s` as its own paragraph of the text item. */
static void
add_part(struct buf *text, const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return;
	if (text->len > 0 && text->data[text->len - 1] != '\n')
		buf_adds(text, "\n");
	buf_add(text, s, n);
}

/* A line naming the rich output types allow_mime dropped, if any. */
static void
add_dropped(struct buf *text, struct json_object *result)
{
	struct json_object *dropped;

	if (!json_object_object_get_ex(result, "dropped_mime", &dropped) ||
	    json_object_array_length(dropped) == 0)
		return;
	struct buf line;
	buf_init(&line);
	buf_adds(&line, "[codeexecd] rich output types not kept (allow_mime): ");
	for (size_t i = 0; i < json_object_array_length(dropped); i++) {
		if (i > 0)
			buf_adds(&line, ", ");
		buf_adds(&line, json_object_get_string(json_object_array_get_idx(dropped, i)));
	}
	buf_add(&line, "", 1);
	add_part(text, line.data);
	buf_free(&line);
}

void
result_name_reasons(struct buf *b, struct json_object *list)
{
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *e = json_object_array_get_idx(list, i);
		buf_printf(b, "%s%s (%s)", i ? ", " : "", json_member_str(e, "name"),
			   json_member_str(e, "reason"));
	}
}

/* The lines of what the daemon did to keep the session's state: a
 * checkpoint restored into a new kernel, or why none was, or why the last
 * automatic checkpoint was not taken. */
static void
add_state(struct buf *text, struct json_object *result)
{
	struct json_object *o, *skipped;
	struct buf line;

	buf_init(&line);
	if (json_object_object_get_ex(result, "restored", &o)) {
		const char *at = json_member_str(o, "taken_at");
		size_t n = json_object_array_length(json_object_object_get(o, "names"));
		buf_printf(&line, "[codeexecd] the kernel was restarted and checkpoint %s, taken at "
				  "%s, was restored (%zu name%s): what changed after %s is lost",
			   json_member_str(o, "checkpoint"), at, n, n == 1 ? "" : "s", at);
		if (json_object_object_get_ex(o, "skipped", &skipped) &&
		    json_object_array_length(skipped) > 0) {
			buf_adds(&line, "; not restored: ");
			result_name_reasons(&line, skipped);
		}
		buf_adds(&line, "\n");
	}
	if (json_object_object_get_ex(result, "restore_error", &o))
		buf_printf(&line, "[codeexecd] the kernel was restarted and its last checkpoint "
				  "could not be restored: %s\n", json_member_str(o, "message"));
	if (json_object_object_get_ex(result, "checkpoint_error", &o))
		buf_printf(&line, "[codeexecd] the automatic checkpoint after the last call was "
				  "not taken: %s\n", json_member_str(o, "message"));
	buf_add(&line, "", 1);
	add_part(text, line.data);
	buf_free(&line);
}

/* The readable text of a result: what kept its state, output, values, the
 * types dropped, the error. */
static char *
render_text(struct json_object *result)
{
	struct buf text;
	struct json_object *rich, *err;

	buf_init(&text);
	add_state(&text, result);
	add_part(&text, json_member_str(result, "stdout"));
	if (json_member_str(result, "stderr")[0]) {
		add_part(&text, "[stderr]\n");
		add_part(&text, json_member_str(result, "stderr"));
	}
	if (json_object_object_get_ex(result, "rich_outputs", &rich)) {
		for (size_t i = 0; i < json_object_array_length(rich); i++) {
			struct json_object *o = json_object_array_get_idx(rich, i);
			if (strcmp(json_member_str(o, "mime_type"), "text/plain") == 0)
				add_part(&text, json_member_str(o, "data"));
		}
	}
	add_dropped(&text, result);
	if (json_object_object_get_ex(result, "error", &err) &&
	    json_object_is_type(err, json_type_object)) {
		const char *tb = json_member_str(err, "traceback");
		const char *type = json_member_str(err, "type");
		if (tb[0])
			add_part(&text, tb);
		/* A traceback that does not name the error (a timeout shows the
		 * kernel's KeyboardInterrupt) gets the error's own line too. */
		if (!tb[0] || !strstr(tb, type)) {
			char *line = NULL;
			if (asprintf(&line, "%s: %s", type, json_member_str(err, "message")) >= 0)
				add_part(&text, line);
			free(line);
		}
	}
	if (text.len == 0)
		buf_adds(&text, "(no output)");
	return buf_release(&text);
}

static struct json_object *
text_item(const char *text)
{
	struct json_object *t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	return t;
}

/* An image item of rich output o (PNG or JPEG, its data inline). */
static struct json_object *
image_item(struct json_object *o, const char *mime)
{
	struct json_object *img = json_object_new_object();
	struct json_object *data = json_object_object_get(o, "data");

	json_object_object_add(img, "type", json_object_new_string("image"));
	/* Shared with structuredContent, not copied: images are large. */
	json_object_object_add(img, "data",
			       json_object_is_type(data, json_type_string)
				       ? json_object_get(data)
				       : json_object_new_string(""));
	json_object_object_add(img, "mimeType", json_object_new_string(mime));
	return img;
}

/*
 * {mime_type, uri, size_bytes, sha256} of rich output o, kept under
 * outputs/ as its "file": how structuredContent names it. Caller owns.
 */
static struct json_object *
rich_reference(struct json_object *o, const char *session_id)
{
	struct json_object *r = json_object_new_object();
	char *uri = uri_session_file(session_id, json_member_str(o, "file"));

	json_member_share(r, "mime_type", o, "mime_type");
	json_object_object_add(r, "uri", json_object_new_string(uri));
	json_member_share(r, "size_bytes", o, "size_bytes");
	json_member_share(r, "sha256", o, "sha256");
	free(uri);
	return r;
}

/* The resource_link item of rich output o, kept under outputs/ as its
 * "file": a published artifact's link, with the sha256 in _meta. */
static struct json_object *
file_link(struct json_object *o, const char *session_id)
{
	struct json_object *ref = rich_reference(o, session_id), *meta = json_object_new_object();

	json_member_share(ref, "name", o, "file");
	struct json_object *l = result_resource_link(ref);
	json_member_share(meta, "sha256", ref, "sha256");
	json_object_object_add(l, "_meta", meta);
	json_object_put(ref);
	return l;
}

/*
 * Add to `content` one image item per PNG or JPEG of rich_outputs carried
 * inline, and one resource_link per rich output carried only by its file.
 */
static void
add_rich_items(struct json_object *content, struct json_object *result, const char *session_id)
{
	struct json_object *rich;

	if (!json_object_object_get_ex(result, "rich_outputs", &rich))
		return;
	for (size_t i = 0; i < json_object_array_length(rich); i++) {
		struct json_object *o = json_object_array_get_idx(rich, i);
		const char *mime = json_member_str(o, "mime_type");
		if (!json_object_object_get_ex(o, "data", NULL)) {
			if (json_object_object_get_ex(o, "file", NULL))
				json_object_array_add(content, file_link(o, session_id));
		} else if (strcmp(mime, "image/png") == 0 || strcmp(mime, "image/jpeg") == 0) {
			json_object_array_add(content, image_item(o, mime));
		}
	}
}

/*
 * structuredContent's rich_outputs: each one with a file as {mime_type,
 * uri, size_bytes, sha256}, without its data; the others shared as they
 * are. Caller owns.
 */
static struct json_object *
structured_rich(struct json_object *rich, const char *session_id)
{
	struct json_object *out = json_object_new_array();

	for (size_t i = 0; i < json_object_array_length(rich); i++) {
		struct json_object *o = json_object_array_get_idx(rich, i);
		if (!json_object_object_get_ex(o, "file", NULL)) {
			json_object_array_add(out, json_object_get(o));
			continue;
		}
		json_object_array_add(out, rich_reference(o, session_id));
	}
	return out;
}

struct json_object *
result_resource_link(struct json_object *p)
{
	struct json_object *l = json_object_new_object();

	json_object_object_add(l, "type", json_object_new_string("resource_link"));
	json_member_share(l, "uri", p, "uri");
	json_member_share(l, "name", p, "name");
	json_member_share(l, "mimeType", p, "mime_type");
	json_member_share(l, "size", p, "size_bytes");
	return l;
}

/* Add one resource_link item per artifact published at the end of the call. */
static void
add_links(struct json_object *content, struct json_object *result)
{
	struct json_object *pub;

	if (!json_object_object_get_ex(result, "published", &pub) ||
	    !json_object_is_type(pub, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(pub); i++)
		json_object_array_add(content,
				      result_resource_link(json_object_array_get_idx(pub, i)));
}

struct json_object *
result_to_tool(struct json_object *result, const char *session_id)
{
	struct json_object *tool = json_object_new_object();
	struct json_object *content = json_object_new_array();
	struct json_object *success;

	char *text = render_text(result);
	json_object_array_add(content, text_item(text));
	free(text);
	add_rich_items(content, result, session_id);
	add_links(content, result);

	/* The result's members, shared (json-c counts references) rather than
	 * copied, and session_id: the result itself is left as it is. */
	struct json_object *sc = json_object_new_object();
	json_object_object_foreach(result, key, val)
		json_object_object_add(sc, key,
				       strcmp(key, "rich_outputs") == 0 &&
						       json_object_is_type(val, json_type_array)
					       ? structured_rich(val, session_id)
					       : json_object_get(val));
	json_object_object_add(sc, "session_id", json_object_new_string(session_id));
	int ok = json_object_object_get_ex(result, "success", &success) &&
		 json_object_get_boolean(success);
	json_object_object_add(tool, "content", content);
	json_object_object_add(tool, "structuredContent", sc);
	json_object_object_add(tool, "isError", json_object_new_boolean(!ok));
	json_object_put(result);
	return tool;
}

/* Add {"name": {"type": type}} to a schema's properties. */
static void
add_typed_property(struct json_object *props, const char *name, const char *type)
{
	struct json_object *p = json_object_new_object();
	json_object_object_add(p, "type", json_object_new_string(type));
	json_object_object_add(props, name, p);
}

struct json_object *
result_output_schema(int or_job)
{
	static const char schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"session_id\":{\"type\":\"string\"},"
		"\"execution_session_id\":{\"type\":\"string\",\"description\":\"The same as "
		"session_id: what a later call passes as execution_session_id to run there.\"},"
		"\"success\":{\"type\":\"boolean\"},"
		"\"stdout\":{\"type\":\"string\"},"
		"\"stderr\":{\"type\":\"string\"},"
		"\"rich_outputs\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
		"\"properties\":{\"mime_type\":{\"type\":\"string\"},\"data\":{\"type\":[\"string\","
		"\"object\",\"array\",\"number\",\"boolean\",\"null\"],\"description\":\"Text, "
		"base64 for a binary type, or the value of a JSON type (application/json).\"},"
		"\"uri\":{\"type\":\"string\",\"description\":\"Instead of data, for an output "
		"over inline_output_max_bytes (or binary, with structured_binary: reference): "
		"the resource (resources/read) holding its bytes.\"},"
		"\"size_bytes\":{\"type\":\"integer\"},\"sha256\":{\"type\":\"string\"}},"
		"\"required\":[\"mime_type\"],"
		"\"anyOf\":[{\"required\":[\"data\"]},{\"required\":[\"uri\",\"size_bytes\","
		"\"sha256\"]}]}},"
		"\"error\":{\"anyOf\":[{\"type\":\"null\"},{\"type\":\"object\","
		"\"properties\":{\"type\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"},"
		"\"traceback\":{\"type\":\"string\"}},"
		"\"required\":[\"type\",\"message\",\"traceback\"]}]},"
		"\"execution_time\":{\"type\":\"number\"},"
		"\"kernel_restarted\":{\"type\":\"boolean\"},"
		"\"restored\":{\"type\":\"object\",\"description\":\"The checkpoint loaded "
		"into the kernel that replaced a dead or killed one before this call; absent "
		"otherwise.\",\"properties\":{\"checkpoint\":{\"type\":\"string\"},"
		"\"taken_at\":{\"type\":\"string\"},\"names\":{\"type\":\"array\","
		"\"items\":{\"type\":\"string\"}},\"skipped\":{\"type\":\"array\","
		"\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
		"\"string\"},\"reason\":{\"type\":\"string\"}}}}},"
		"\"required\":[\"checkpoint\",\"taken_at\",\"names\",\"skipped\"]},"
		"\"restore_error\":{\"type\":\"object\",\"description\":\"Why the last "
		"checkpoint could not be loaded into the kernel that replaced a dead one.\"},"
		"\"checkpoint_error\":{\"type\":\"object\",\"description\":\"Why the "
		"automatic checkpoint after the previous call was not taken.\"},"
		"\"dropped_mime\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
		"\"description\":\"MIME types of rich outputs not kept (not in allow_mime); "
		"absent when none was dropped.\"},"
		"\"artifacts\":{\"type\":\"array\",\"description\":\"Files of outputs/ the call "
		"created or changed; absent when none.\",\"items\":{\"type\":\"object\","
		"\"properties\":{\"name\":{\"type\":\"string\"},\"size_bytes\":{\"type\":\"integer\"},"
		"\"mime_type\":{\"type\":\"string\"},\"modified_at\":{\"type\":\"string\"}},"
		"\"required\":[\"name\",\"size_bytes\",\"mime_type\",\"modified_at\"]}},"
		"\"artifacts_truncated\":{\"type\":\"boolean\"},"
		"\"published\":{\"type\":\"array\",\"description\":\"Where auto_publish "
		"publishers put the artifacts.\",\"items\":{\"type\":\"object\"}},"
		"\"publish_errors\":{\"type\":\"array\",\"description\":\"Artifacts auto_publish "
		"publishers could not take, and why.\",\"items\":{\"type\":\"object\"}},"
		"\"timings\":{\"type\":\"object\",\"properties\":{"
		"\"queued_ms\":{\"type\":\"number\",\"minimum\":0},"
		"\"kernel_ms\":{\"type\":\"number\",\"minimum\":0},"
		"\"total_ms\":{\"type\":\"number\",\"minimum\":0},"
		"\"stdin_wait_ms\":{\"type\":\"number\",\"minimum\":0,\"description\":"
		"\"Time the code waited in input() for the client's answers.\"}},"
		"\"required\":[\"queued_ms\",\"kernel_ms\",\"total_ms\"]}},"
		"\"required\":[\"session_id\",\"success\",\"stdout\",\"stderr\","
		"\"rich_outputs\",\"error\",\"execution_time\"]}";
	struct json_object *s = json_tokener_parse(schema);
	struct json_object *props;

	if (!or_job)
		return s;
	/* A backgrounded call answers with the job instead of the result. */
	json_object_object_get_ex(s, "properties", &props);
	add_typed_property(props, "job_id", "string");
	add_typed_property(props, "poll_tool", "string");
	add_typed_property(props, "message", "string");
	add_typed_property(props, "promoted", "boolean");
	struct json_object *req = json_object_new_array();
	json_object_array_add(req, json_object_new_string("session_id"));
	json_object_object_add(s, "required", req);
	return s;
}
