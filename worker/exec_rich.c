/* exec_rich.c - see exec_rich.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "exec_rich.h"
#include "ipc.h"
#include "ipc_msg.h"
#include "outputs.h"
#include "sha256.h"
#include "xmalloc.h"

/* Where outputs named by file go: below outputs/, which resources/read serves. */
static const struct spill_dir rich_dir = {OUTPUTS_DIR "/rich", 0755};

/* Where an output over the limit goes, for one exec_rich_add(); borrowed. */
struct rich_dest {
	struct exec_rich *r;
	size_t limit;			/* rich_limit, bytes per output */
	const struct spill_place *place;
	uint32_t id;			/* the request, in the spill file's name */
};

void
exec_rich_init(struct exec_rich *r)
{
	memset(r, 0, sizeof(*r));
	r->list = json_object_new_array();
	r->dropped = json_object_new_array();
}

void
exec_rich_free(struct exec_rich *r)
{
	json_object_put(r->list);
	json_object_put(r->value);
	json_object_put(r->dropped);
	r->list = r->value = r->dropped = NULL;
}

void
exec_rich_clear(struct exec_rich *r)
{
	json_object_put(r->list);
	r->list = json_object_new_array();
	r->bytes = 0;
}

/* Bytes `v` will take in the result, roughly. */
static size_t
value_size(struct json_object *v)
{
	if (json_object_is_type(v, json_type_string))
		return (size_t)json_object_get_string_len(v);
	return strlen(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

/* 1 for MIME types whose data Jupyter carries as base64 text. */
static int
is_base64_mime(const char *mime)
{
	return strncmp(mime, "image/", 6) == 0 && strcmp(mime, "image/svg+xml") != 0;
}

/*
 * Base64 `v` without the line breaks IPython puts in (b2a_base64 ends with
 * "\n"): strict decoders refuse whitespace. Caller owns the result.
 */
static struct json_object *
base64_clean(struct json_object *v)
{
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);

	if (strcspn(s, " \t\r\n") == len)
		return json_object_get(v);
	char *out = xmalloc(len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]))
			out[n++] = s[i];
	struct json_object *o = json_object_new_string_len(out, (int)n);
	free(out);
	return o;
}

/* File name extensions of the MIME types a kernel commonly sends. */
static const struct {
	const char *mime, *ext;
} mime_ext[] = {
	{"image/png", ".png"},	      {"image/jpeg", ".jpg"},	 {"image/gif", ".gif"},
	{"image/webp", ".webp"},      {"image/bmp", ".bmp"},	 {"image/svg+xml", ".svg"},
	{"text/html", ".html"},	      {"text/markdown", ".md"},	 {"text/latex", ".tex"},
	{"text/plain", ".txt"},	      {"application/json", ".json"},
	{"application/pdf", ".pdf"},  {"application/javascript", ".js"},
};

/* The file name extension for mime, ".bin" if unknown. */
static const char *
ext_of(const char *mime)
{
	for (size_t i = 0; i < sizeof(mime_ext) / sizeof(mime_ext[0]); i++)
		if (strcmp(mime, mime_ext[i].mime) == 0)
			return mime_ext[i].ext;
	return ".bin";
}

/*
 * The bytes a rich output stands for: base64 decoded for binary types, the
 * text itself, or JSON for structured data. Caller frees; NULL if bad base64.
 */
static unsigned char *
rich_bytes_of(const char *mime, struct json_object *v, size_t *len)
{
	if (!json_object_is_type(v, json_type_string)) {
		const char *j = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
		*len = strlen(j);
		return (unsigned char *)xstrdup(j);
	}
	if (!is_base64_mime(mime) && strcmp(mime, "application/pdf") != 0) {
		*len = (size_t)json_object_get_string_len(v);
		return (unsigned char *)xstrndup(json_object_get_string(v), *len);
	}
	struct json_object *clean = base64_clean(v);
	const char *b64 = json_object_get_string(clean);
	size_t n = (size_t)json_object_get_string_len(clean);
	unsigned char *out = xmalloc(n / 4 * 3 + 3);
	int got = n % 4 ? -1 : EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		json_object_put(clean);
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts padding as zero bytes. */
	for (size_t i = n; i > 0 && b64[i - 1] == '='; i--)
		got--;
	json_object_put(clean);
	*len = (size_t)got;
	return out;
}

/* Save rich output v of `mime` to a spill file; the note that replaces it. */
static char *
rich_spill(const struct rich_dest *d, const char *mime, struct json_object *v, size_t size)
{
	char *rel = NULL, *note, what[32], why[ERR_LEN] = "";
	size_t len;
	unsigned char *bytes = rich_bytes_of(mime, v, &len);

	snprintf(what, sizeof(what), "rich%u", ++d->r->saved);
	if (bytes == NULL)
		err_set(why, sizeof(why), "its base64 data is malformed");
	else
		spill_save(d->place, &spill_output_dir, d->id, what, ext_of(mime), bytes, len,
			   &rel, why, sizeof(why));
	if (why[0] == '\0') {
		d->r->spilled++;
		note = xasprintf("[codeexecd] the %s output (%zu bytes) exceeds the rich output limit of %zu bytes; it was saved to %s",
				 mime, size, d->limit, rel);
	} else {
		note = xasprintf("[codeexecd] the %s output (%zu bytes) exceeds the rich output limit of %zu bytes and could not be saved: %s",
				 mime, size, d->limit, why);
	}
	free(bytes);
	free(rel);
	return note;
}

/* 1 for the types whose bytes are binary (base64 in Jupyter's messages). */
static int
is_binary_mime(const char *mime)
{
	return is_base64_mime(mime) || strcmp(mime, "application/pdf") == 0;
}

/*
 * Save rich output v of `mime` under outputs/rich/ and add its file (relative
 * to outputs/), size_bytes and sha256 to entry. 0, or -1 with why[why_len].
 */
static int
rich_file(const struct rich_dest *d, const char *mime, struct json_object *v,
	  struct json_object *entry, char *why, size_t why_len)
{
	char what[32], *rel = NULL, hex[SHA256_HEX_LEN + 1];
	size_t len;
	unsigned char *bytes = rich_bytes_of(mime, v, &len);

	if (bytes == NULL)
		return err_set(why, why_len, "its base64 data is malformed");
	snprintf(what, sizeof(what), "rich%u", ++d->r->saved);
	if (spill_save(d->place, &rich_dir, d->id, what, ext_of(mime), bytes, len, &rel,
		       why, why_len) == -1 ||
	    sha256_hex(bytes, len, hex) == -1) {
		if (why[0] == '\0')
			err_set(why, why_len, "sha256 of %s failed", rel);
		free(rel);
		free(bytes);
		return -1;
	}
	/* rel is outputs/rich/...: the name resources/read knows it by. */
	json_object_object_add(entry, "file",
			       json_object_new_string(rel + strlen(OUTPUTS_DIR "/")));
	json_object_object_add(entry, "size_bytes", json_object_new_int64((int64_t)len));
	json_object_object_add(entry, "sha256", json_object_new_string(hex));
	free(rel);
	free(bytes);
	return 0;
}

/* Append a text/plain note (consumed) in place of an output. */
static void
add_note(struct exec_rich *r, struct json_object *entry, char *note)
{
	json_object_object_add(entry, "mime_type", json_object_new_string("text/plain"));
	json_object_object_add(entry, "data", json_object_new_string(note));
	r->bytes += strlen(note);
	free(note);
	json_object_array_add(r->list, entry);
}

/*
 * Append {mime_type, data} for `mime` if `data` has it. An output under
 * the rich limit but over inline_max (or over what one result can carry,
 * with inline_max) is saved under outputs/rich/ and named by its file
 * instead; one over the rich limit (or what one result can carry, without
 * inline_max) is saved to a spill file and replaced by a text/plain note
 * naming it. With binary_files, a binary output kept inline is saved too.
 */
static void
add_mime(const struct rich_dest *d, struct json_object *data, const char *mime)
{
	struct exec_rich *r = d->r;
	struct json_object *v, *entry;
	char why[ERR_LEN] = "";

	if (!json_object_object_get_ex(data, mime, &v))
		return;
	size_t size = value_size(v);
	int over_cap = r->bytes + size > EXEC_RICH_CAP, over = size > d->limit || over_cap;
	/* The rich limit bounds outputs by file too: past it, a spill file. */
	int by_ref = r->inline_max > 0 && size <= d->limit && (over_cap || size > r->inline_max);
	entry = json_object_new_object();
	if (by_ref) {
		if (rich_file(d, mime, v, entry, why, sizeof(why)) == 0) {
			json_object_object_add(entry, "mime_type", json_object_new_string(mime));
			json_object_array_add(r->list, entry);
			return;
		}
		add_note(r, entry, xasprintf("[codeexecd] the %s output (%zu bytes) exceeds inline_output_max_bytes (%zu) and could not be saved: %s",
					     mime, size, r->inline_max, why));
		return;
	}
	if (over) {
		add_note(r, entry, rich_spill(d, mime, v, size));
		return;
	}
	/* Without its file, the output is still whole in the result. */
	if (r->binary_files && is_binary_mime(mime))
		rich_file(d, mime, v, entry, why, sizeof(why));
	r->bytes += size;
	json_object_object_add(entry, "mime_type", json_object_new_string(mime));
	if (is_base64_mime(mime) && json_object_is_type(v, json_type_string))
		v = base64_clean(v);
	else
		v = json_object_get(v);
	json_object_object_add(entry, "data", v);
	json_object_array_add(r->list, entry);
}

/* Whether NULL-terminated `v` holds `s`. */
static int
strv_has(char *const *v, const char *s)
{
	for (; *v; v++)
		if (strcmp(*v, s) == 0)
			return 1;
	return 0;
}

/* Add the types of `data` that `allow_mime` does not hold to r->dropped. */
static void
note_dropped(struct exec_rich *r, struct json_object *data, char *const *allow_mime)
{
	json_object_object_foreach(data, mime, v)
	{
		(void)v;
		size_t n = json_object_array_length(r->dropped);
		/* RESULT refuses more, or longer: rather fewer names than none. */
		if (n >= IPC_DROPPED_MAX || strlen(mime) > 255 || strv_has(allow_mime, mime))
			continue;
		size_t i = 0;
		while (i < n && strcmp(json_object_get_string(
					   json_object_array_get_idx(r->dropped, i)), mime) != 0)
			i++;
		if (i == n)
			json_object_array_add(r->dropped, json_object_new_string(mime));
	}
}

void
exec_rich_add(struct exec_rich *r, struct json_object *content, char *const *allow_mime,
	      size_t limit, const struct spill_place *place, uint32_t id)
{
	const struct rich_dest d = {r, limit, place, id};
	struct json_object *data;

	if (!json_object_object_get_ex(content, "data", &data) ||
	    !json_object_is_type(data, json_type_object))
		return;
	struct json_object *value;
	if (json_object_object_get_ex(data, IPC_VALUE_MIME, &value)) {
		json_object_put(r->value);
		r->value = json_object_get(value);
		r->has_value = 1;
		return;
	}
	if (allow_mime == NULL) {
		json_object_object_foreach(data, mime, v)
		{
			(void)v;
			add_mime(&d, data, mime);
		}
		return;
	}
	for (size_t i = 0; allow_mime[i]; i++)
		add_mime(&d, data, allow_mime[i]);
	note_dropped(r, data, allow_mime);
}
