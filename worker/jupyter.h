/*
 * jupyter.h - the Jupyter messaging protocol 5.3 on the wire.
 *
 * Owns signing and verification (HMAC-SHA256), building the frames of an
 * outgoing message, parsing the frames of an incoming one, sending and
 * receiving whole multipart messages on a ZeroMQ socket, and stripping ANSI
 * escape sequences from kernel text. It knows nothing of kernels or
 * executions: those live in kernel.c and execute.c.
 *
 * A wire message is [identities..., "<IDS|MSG>", signature, header,
 * parent_header, metadata, content, buffers...]; the signature is the hex
 * HMAC of the four JSON frames in that order.
 */
#ifndef WORKER_JUPYTER_H
#define WORKER_JUPYTER_H

#include <stddef.h>

#include <json-c/json.h>

#include "err.h"

#define JUPYTER_DELIM "<IDS|MSG>"
#define JUPYTER_VERSION "5.3"
/* Hex digits of an HMAC-SHA256 signature, without the NUL. */
#define JUPYTER_SIG_HEX 64
/* Longest msg_id we generate, with the NUL. */
#define JUPYTER_MSG_ID_MAX 64

/* Result codes of jupyter_parse() and jupyter_recv(). */
enum jupyter_status {
	JUPYTER_OK = 0,
	JUPYTER_EMALFORMED = -1, /* not a Jupyter message: dropped */
	JUPYTER_EBADSIG = -2,	 /* missing or wrong signature: dropped and counted */
	JUPYTER_EIO = -3,	 /* the socket failed; errno is set */
};

/* One frame, borrowed: the caller keeps `data` alive while it is used. */
struct jupyter_frame {
	const void *data;
	size_t len;
};

/* The HMAC key of one kernel, ready to sign. Opaque. */
struct jupyter_signer;

/* Per-worker identity stamped on every outgoing header. */
struct jupyter_session {
	char id[33];		/* random hex, per worker */
	unsigned long seq;	/* counter making msg_ids unique */
	struct jupyter_signer *signer; /* borrowed; replaced on each new kernel */
};

/* An incoming message. Every object is owned by the struct. */
struct jupyter_msg {
	struct json_object *header;
	struct json_object *parent_header;
	struct json_object *metadata;
	struct json_object *content;
	const char *msg_type;	   /* borrowed from header, never NULL when parsed */
	const char *parent_msg_id; /* borrowed from parent_header, NULL if none */
	size_t nbuffers;	   /* binary buffers after content (ignored) */
};

/*
 * A signer for `key` (keylen bytes, not NUL-terminated necessarily).
 * Returns NULL if OpenSSL cannot make one (logged). Caller owns the result
 * and releases it with jupyter_signer_free().
 */
struct jupyter_signer *jupyter_signer_new(const void *key, size_t keylen);
/* Release a signer and set *sp to NULL; NULL is fine. */
void jupyter_signer_free(struct jupyter_signer **sp);

/*
 * Sign the four JSON frames f[0..3] (header, parent, metadata, content)
 * into hex[JUPYTER_SIG_HEX + 1]. Returns 0, or -1 if OpenSSL failed.
 */
int jupyter_sign(const struct jupyter_signer *s, const struct jupyter_frame f[4], char *hex);
/*
 * 1 if `sig` (siglen bytes of hex) is the signature of f[0..3], else 0.
 * The comparison is constant-time.
 */
int jupyter_verify(const struct jupyter_signer *s, const void *sig, size_t siglen,
		   const struct jupyter_frame f[4]);

/* Start a session with a fresh random id; `signer` is borrowed. */
void jupyter_session_init(struct jupyter_session *sess, struct jupyter_signer *signer);

/*
 * Build the six frames of an outgoing message (delimiter, signature, header,
 * parent_header {}, metadata {}, content) as strings in out[0..5]; `content`
 * is borrowed (NULL means {}). The msg_id is copied into
 * msg_id[JUPYTER_MSG_ID_MAX]. The caller owns out[i].data (free each with
 * free(), see jupyter_frames_free()). Returns 0, or -1 if signing failed.
 */
int jupyter_build(struct jupyter_session *sess, const char *msg_type,
		  struct json_object *content, struct jupyter_frame out[6], char *msg_id);
/* free() the data of n frames built by jupyter_build(). */
void jupyter_frames_free(struct jupyter_frame *f, size_t n);

/*
 * Parse the frames of one received message into *msg. On JUPYTER_OK the
 * caller owns what *msg holds (jupyter_msg_clear); on any error *msg is
 * empty and why[why_len] says why.
 */
enum jupyter_status jupyter_parse(const struct jupyter_signer *s, const struct jupyter_frame *f,
				  size_t nframes, struct jupyter_msg *msg, char *why,
				  size_t why_len);
/* Release what *msg holds; it may be cleared twice. */
void jupyter_msg_clear(struct jupyter_msg *msg);

/*
 * Build and send one message on ZeroMQ socket `sock` (non-blocking is not
 * used: a DEALER queues). `content` is borrowed. The msg_id is copied into
 * msg_id[JUPYTER_MSG_ID_MAX] if msg_id is not NULL. Returns 0, or -1 with
 * the failure logged.
 */
int jupyter_send(void *sock, struct jupyter_session *sess, const char *msg_type,
		 struct json_object *content, char *msg_id);
/*
 * Receive one whole multipart message from `sock` without blocking and parse
 * it. JUPYTER_EIO with errno EAGAIN means nothing was waiting. On JUPYTER_OK
 * the caller owns *msg; on an error why[why_len] says what went wrong.
 */
enum jupyter_status jupyter_recv(void *sock, const struct jupyter_signer *s,
				 struct jupyter_msg *msg, char *why, size_t why_len);

/*
 * Remove ANSI escape sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL or
 * ESC \", and two-byte "ESC x") from the NUL-terminated string s, in place.
 * Returns the new length.
 */
size_t jupyter_strip_ansi(char *s);

#endif
