/* jupyter.c - see jupyter.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <zmq.h>

#include "clock.h"
#include "hex.h"
#include "jupyter.h"
#include "log.h"
#include "rand.h"
#include "xmalloc.h"

#define SIG_RAW_LEN 32

struct jupyter_signer {
	EVP_MAC *mac;
	EVP_MAC_CTX *keyed; /* initialized with the key; duplicated per message */
};

struct jupyter_signer *
jupyter_signer_new(const void *key, size_t keylen)
{
	struct jupyter_signer *s = xcalloc(1, sizeof(*s));
	char digest[] = "SHA256";
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
		OSSL_PARAM_construct_end(),
	};

	s->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (s->mac == NULL || (s->keyed = EVP_MAC_CTX_new(s->mac)) == NULL ||
	    !EVP_MAC_init(s->keyed, key, keylen, params)) {
		log_warnx("jupyter: cannot set up HMAC-SHA256 with OpenSSL");
		jupyter_signer_free(&s);
		return NULL;
	}
	return s;
}

void
jupyter_signer_free(struct jupyter_signer **sp)
{
	struct jupyter_signer *s = *sp;

	if (s == NULL)
		return;
	EVP_MAC_CTX_free(s->keyed);
	EVP_MAC_free(s->mac);
	free(s);
	*sp = NULL;
}

/* Raw HMAC of the four frames into out[SIG_RAW_LEN]; 0 or -1. */
static int
sign_raw(const struct jupyter_signer *s, const struct jupyter_frame f[4], unsigned char *out)
{
	EVP_MAC_CTX *c = EVP_MAC_CTX_dup(s->keyed);
	size_t outlen = 0;
	int ok = c != NULL;

	for (int i = 0; ok && i < 4; i++)
		ok = EVP_MAC_update(c, f[i].data, f[i].len);
	ok = ok && EVP_MAC_final(c, out, &outlen, SIG_RAW_LEN) && outlen == SIG_RAW_LEN;
	EVP_MAC_CTX_free(c);
	return ok ? 0 : -1;
}

int
jupyter_sign(const struct jupyter_signer *s, const struct jupyter_frame f[4], char *hex)
{
	unsigned char raw[SIG_RAW_LEN];

	if (sign_raw(s, f, raw) == -1)
		return -1;
	hex_encode(hex, raw, SIG_RAW_LEN); /* JUPYTER_SIG_HEX digits */
	return 0;
}

int
jupyter_verify(const struct jupyter_signer *s, const void *sig, size_t siglen,
	       const struct jupyter_frame f[4])
{
	char want[JUPYTER_SIG_HEX + 1];
	char got[JUPYTER_SIG_HEX];

	if (siglen != JUPYTER_SIG_HEX || jupyter_sign(s, f, want) == -1)
		return 0;
	/* Peers may send upper-case hex; fold so the compare stays constant-time. */
	for (size_t i = 0; i < JUPYTER_SIG_HEX; i++) {
		char c = ((const char *)sig)[i];
		got[i] = (c >= 'A' && c <= 'F') ? (char)(c - 'A' + 'a') : c;
	}
	return CRYPTO_memcmp(want, got, JUPYTER_SIG_HEX) == 0;
}

void
jupyter_session_init(struct jupyter_session *sess, struct jupyter_signer *signer)
{
	rand_hex(sess->id, 16);
	sess->seq = 0;
	sess->signer = signer;
}

/* ISO 8601 UTC time with microseconds into out (>= 32 bytes). */
static void
iso8601_now(char *out, size_t size)
{
	char base[32];
	long nsec = clock_wall_format(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", 1);

	snprintf(out, size, "%.19s.%06dZ", base, (int)(nsec / 1000 % 1000000));
}

/* A string frame owning a copy of `s`. */
static struct jupyter_frame
frame_dup(const char *s, size_t len)
{
	struct jupyter_frame f = {xstrndup(s, len), len};
	return f;
}

/* A frame holding the plain JSON text of `o` (borrowed). */
static struct jupyter_frame
frame_json(struct json_object *o)
{
	size_t len;
	const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	return frame_dup(text, len);
}

int
jupyter_build(struct jupyter_session *sess, const char *msg_type, struct json_object *content,
	      struct jupyter_frame out[6], char *msg_id)
{
	char date[64];
	char sig[JUPYTER_SIG_HEX + 1];
	struct json_object *hdr = json_object_new_object();

	snprintf(msg_id, JUPYTER_MSG_ID_MAX, "%s_%lu", sess->id, ++sess->seq);
	iso8601_now(date, sizeof(date));
	json_object_object_add(hdr, "msg_id", json_object_new_string(msg_id));
	json_object_object_add(hdr, "session", json_object_new_string(sess->id));
	json_object_object_add(hdr, "username", json_object_new_string("codeexecd"));
	json_object_object_add(hdr, "date", json_object_new_string(date));
	json_object_object_add(hdr, "msg_type", json_object_new_string(msg_type));
	json_object_object_add(hdr, "version", json_object_new_string(JUPYTER_VERSION));

	out[0] = frame_dup(JUPYTER_DELIM, strlen(JUPYTER_DELIM));
	out[2] = frame_json(hdr);
	out[3] = frame_dup("{}", 2);
	out[4] = frame_dup("{}", 2);
	out[5] = content ? frame_json(content) : frame_dup("{}", 2);
	json_object_put(hdr);
	if (jupyter_sign(sess->signer, out + 2, sig) == -1) {
		out[1] = frame_dup("", 0);
		jupyter_frames_free(out, 6);
		return -1;
	}
	out[1] = frame_dup(sig, JUPYTER_SIG_HEX);
	return 0;
}

void
jupyter_frames_free(struct jupyter_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((void *)f[i].data);
		f[i].data = NULL;
		f[i].len = 0;
	}
}

/* Parse one frame as a JSON object; NULL if it is not exactly one object. */
static struct json_object *
parse_object(const struct jupyter_frame *f)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (f->len > (size_t)INT32_MAX)
		return NULL;
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, f->data, (int)f->len);
	int complete = json_tokener_get_error(tok) == json_tokener_success &&
		       (size_t)json_tokener_get_parse_end(tok) == f->len;
	json_tokener_free(tok);
	if (!complete || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Index of the delimiter frame, or -1. */
static long
find_delim(const struct jupyter_frame *f, size_t n)
{
	size_t dlen = strlen(JUPYTER_DELIM);

	for (size_t i = 0; i < n; i++)
		if (f[i].len == dlen && memcmp(f[i].data, JUPYTER_DELIM, dlen) == 0)
			return (long)i;
	return -1;
}

/* Fill *msg from the four verified JSON frames; JUPYTER_OK or EMALFORMED. */
static enum jupyter_status
parse_parts(const struct jupyter_frame *j, struct jupyter_msg *msg, char *why, size_t why_len)
{
	struct json_object *o;

	msg->header = parse_object(&j[0]);
	msg->parent_header = parse_object(&j[1]);
	msg->metadata = parse_object(&j[2]);
	msg->content = parse_object(&j[3]);
	if (!msg->header || !msg->parent_header || !msg->metadata || !msg->content) {
		err_set(why, why_len, "a JSON frame is not an object");
		goto bad;
	}
	if (!json_object_object_get_ex(msg->header, "msg_type", &o) ||
	    !json_object_is_type(o, json_type_string)) {
		err_set(why, why_len, "header has no msg_type");
		goto bad;
	}
	msg->msg_type = json_object_get_string(o);
	if (json_object_object_get_ex(msg->parent_header, "msg_id", &o) &&
	    json_object_is_type(o, json_type_string))
		msg->parent_msg_id = json_object_get_string(o);
	return JUPYTER_OK;
bad:
	jupyter_msg_clear(msg);
	return JUPYTER_EMALFORMED;
}

enum jupyter_status
jupyter_parse(const struct jupyter_signer *s, const struct jupyter_frame *f, size_t nframes,
	      struct jupyter_msg *msg, char *why, size_t why_len)
{
	memset(msg, 0, sizeof(*msg));
	long d = find_delim(f, nframes);
	if (d < 0) {
		err_set(why, why_len, "no <IDS|MSG> delimiter");
		return JUPYTER_EMALFORMED;
	}
	size_t first = (size_t)d + 2; /* the header frame */
	if (nframes < first + 4) {
		err_set(why, why_len, "too few frames after the delimiter");
		return JUPYTER_EMALFORMED;
	}
	if (f[d + 1].len == 0) {
		err_set(why, why_len, "unsigned message");
		return JUPYTER_EBADSIG;
	}
	if (!jupyter_verify(s, f[d + 1].data, f[d + 1].len, f + first)) {
		err_set(why, why_len, "bad signature");
		return JUPYTER_EBADSIG;
	}
	msg->nbuffers = nframes - first - 4;
	return parse_parts(f + first, msg, why, why_len);
}

void
jupyter_msg_clear(struct jupyter_msg *msg)
{
	json_object_put(msg->header);
	json_object_put(msg->parent_header);
	json_object_put(msg->metadata);
	json_object_put(msg->content);
	memset(msg, 0, sizeof(*msg));
}

int
jupyter_send(void *sock, struct jupyter_session *sess, const char *msg_type,
	     struct json_object *content, char *msg_id)
{
	struct jupyter_frame f[6];
	char id[JUPYTER_MSG_ID_MAX];

	if (jupyter_build(sess, msg_type, content, f, id) == -1) {
		log_warnx("jupyter: cannot sign %s", msg_type);
		return -1;
	}
	for (int i = 0; i < 6; i++) {
		/* Never block: a DEALER queues, so EAGAIN means the kernel is gone. */
		int flags = ZMQ_DONTWAIT | (i < 5 ? ZMQ_SNDMORE : 0);
		if (zmq_send(sock, f[i].data, f[i].len, flags) == -1) {
			log_warnx("jupyter: send %s: %s", msg_type, zmq_strerror(zmq_errno()));
			jupyter_frames_free(f, 6);
			return -1;
		}
	}
	jupyter_frames_free(f, 6);
	if (msg_id)
		memcpy(msg_id, id, sizeof(id));
	return 0;
}

/* Close the n received parts. */
static void
parts_close(zmq_msg_t *parts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		zmq_msg_close(&parts[i]);
	free(parts);
}

enum jupyter_status
jupyter_recv(void *sock, const struct jupyter_signer *s, struct jupyter_msg *msg,
	     char *why, size_t why_len)
{
	zmq_msg_t *parts = NULL;
	size_t n = 0, cap = 0;
	int more = 1;

	memset(msg, 0, sizeof(*msg));
	while (more) {
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			parts = xreallocarray(parts, cap, sizeof(*parts));
		}
		zmq_msg_init(&parts[n]);
		/* Parts of one message arrive together: only the first may be absent. */
		if (zmq_msg_recv(&parts[n], sock, n == 0 ? ZMQ_DONTWAIT : 0) == -1) {
			int e = zmq_errno();
			zmq_msg_close(&parts[n]);
			parts_close(parts, n);
			err_set(why, why_len, "%s", zmq_strerror(e));
			errno = e;
			return JUPYTER_EIO;
		}
		more = zmq_msg_more(&parts[n]);
		n++;
	}
	struct jupyter_frame *f = xreallocarray(NULL, n, sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		f[i].data = zmq_msg_data(&parts[i]);
		f[i].len = zmq_msg_size(&parts[i]);
	}
	enum jupyter_status st = jupyter_parse(s, f, n, msg, why, why_len);
	free(f);
	parts_close(parts, n);
	return st;
}

/* Length of the escape sequence starting at s[0] == ESC. */
static size_t
ansi_len(const char *s)
{
	size_t i;

	if (s[1] == '[') { /* CSI: parameters and intermediates, then a final byte */
		for (i = 2; s[i] && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e);
		     i++)
			;
		return s[i] ? i + 1 : i;
	}
	if (s[1] == ']') { /* OSC: up to BEL or ST (ESC \) */
		for (i = 2; s[i] && s[i] != '\a' && !(s[i] == '\033' && s[i + 1] == '\\'); i++)
			;
		if (s[i] == '\a')
			return i + 1;
		return s[i] ? i + 2 : i;
	}
	if (s[1] && strchr("()*+", s[1])) /* charset designation: ESC ( B */
		return s[2] ? 3 : 2;
	return s[1] ? 2 : 1;
}

size_t
jupyter_strip_ansi(char *s)
{
	char *w = s;

	for (const char *r = s; *r;) {
		if (*r == '\033') {
			r += ansi_len(r);
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	return (size_t)(w - s);
}
