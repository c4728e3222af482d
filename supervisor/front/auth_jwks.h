/*
 * auth_jwks.h - JSON Web Key Sets: reading them into OpenSSL keys, fetching
 * them from the issuer over verified https, and the cache of one issuer's.
 *
 * A set is immutable once read and reference-counted, so a validation
 * holds the set it started with while a refresh swaps in a new one.
 */
#ifndef SUPERVISOR_AUTH_JWKS_H
#define SUPERVISOR_AUTH_JWKS_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#define JWKS_MAX_BYTES (256 * 1024) /* a JWKS or discovery document, at most */
#define JWKS_MAX_KEYS 64
#define JWKS_REFRESH_MIN_S 60.0	     /* an unknown kid refetches at most this often */
#define JWKS_MAX_AGE_S 3600.0	     /* a set older than this is refetched when next used */

enum jwk_type {
	JWK_RSA,
	JWK_EC,
};

struct jwk {
	char *kid;
	enum jwk_type type;
	int ec_bits;	/* JWK_EC: 256 (P-256) or 384 (P-384) */
	char alg[8];	/* the key's own "alg", or "" when it names none */
	EVP_PKEY *pkey; /* public only */
};

struct jwks {
	struct jwk *v;
	size_t n;
	int refs; /* under the source's lock */
};

/*
 * Strictly parse `len` bytes of JSON text that must be one object (RFC
 * 8259, no \u0000 anywhere). Returns it (caller owns) or NULL.
 */
struct json_object *auth_json_object(const char *text, size_t len);
/*
 * Read a JWKS document. Keys that are not RSA (2048 bits or more) or EC
 * P-256/P-384 public signature keys, or that have no kid, are skipped and
 * counted in *skipped. Returns the set (refs 1; jwks_put it) or NULL with
 * why when the document is not a JWKS at all.
 */
struct jwks *jwks_parse(const char *text, size_t len, size_t *skipped, char *why,
			size_t why_len);
/* The key called `kid`, borrowed from `set`, or NULL. */
const struct jwk *jwks_find(const struct jwks *set, const char *kid);
/* Free a set read by jwks_parse (unreferenced: for tests and the source). */
void jwks_free(struct jwks *set);

/*
 * GET an https `url` (certificate and host verified; `ca_file` NULL or ""
 * for the system's CAs; no redirects) into *body (caller frees), at most
 * JWKS_MAX_BYTES. Returns 0 or -1 with why.
 */
int jwks_https_get(const char *url, const char *ca_file, char **body, size_t *len, char *why,
		   size_t why_len);

/*
 * Before the fork and for codeexecd -n: auth.ca_file at `path` is a regular
 * file of PEM certificates that the front, running as front_uid/front_gid
 * ((uid_t)-1: the caller's own), may read. 0, or -1 with why.
 */
int jwks_ca_check(const char *path, uid_t front_uid, gid_t front_gid, char *why, size_t why_len);

/* The keys of one issuer, cached and refreshed. */
struct jwks_source {
	char *issuer;
	char *jwks_uri;	 /* configured, or discovered once; NULL: not known yet */
	char *ca_file;	 /* NULL: the system's */
	/* How to fetch (jwks_https_get; a test replaces it). */
	int (*get)(const char *url, const char *ca_file, char **body, size_t *len, char *why,
		   size_t why_len);
	double (*now)(void); /* monotonic seconds (clock_mono; a test replaces it) */
	pthread_mutex_t lock;	    /* keys, refs */
	pthread_mutex_t fetch_lock; /* one fetch at a time; the fields below */
	struct jwks *keys;	    /* NULL: never fetched successfully */
	double fetched;		    /* now() of the last successful fetch */
	double tried;		    /* now() of the last attempt; 0: never */
	unsigned long fetches;	    /* attempts, for the log and tests */
};

/* Set up `src` (owns copies of the strings; jwks_uri NULL or "": discover). */
void jwks_source_init(struct jwks_source *src, const char *issuer, const char *jwks_uri,
		      const char *ca_file);
void jwks_source_free(struct jwks_source *src);
/*
 * The current set, referenced (jwks_source_put it), fetching it first when
 * there is none yet or it is older than JWKS_MAX_AGE_S. NULL when no set
 * was ever fetched.
 */
struct jwks *jwks_source_get(struct jwks_source *src);
/*
 * A token named a kid the set `seen` lacks: fetch again unless the last
 * attempt is less than JWKS_REFRESH_MIN_S old. Returns the (maybe new)
 * current set, referenced, or NULL. A failed fetch keeps the old set.
 */
struct jwks *jwks_source_refresh(struct jwks_source *src, const struct jwks *seen);
void jwks_source_put(struct jwks_source *src, struct jwks *set);

#endif
