/*
 * auth_jwt.h - validating a JWT access token (RFC 7519, RFC 9068) against
 * a JWKS and the configured policy, with OpenSSL EVP and json-c only.
 *
 * The signature is checked over the exact header.payload bytes before any
 * claim is believed; alg must be allowed and fit the key's type (never
 * none, never HS*); kid selects the key; exp, nbf (with skew), iss exactly,
 * aud holding one of the audiences, the identity claim, and last the scopes.
 */
#ifndef SUPERVISOR_AUTH_JWT_H
#define SUPERVISOR_AUTH_JWT_H

#include <stddef.h>
#include <time.h>

struct jwks;

#define JWT_MAX_BYTES 16384	/* a longer token is refused before decoding */
#define JWT_IDENTITY_MAX 127	/* bytes of the identity claim's value */

enum jwt_status {
	JWT_OK = 0,
	JWT_MALFORMED,	   /* not three strict base64url parts of JSON objects */
	JWT_ALG,	   /* alg not allowed, or unfit for the key */
	JWT_UNKNOWN_KID,   /* no key of that kid in the set (refresh, then retry) */
	JWT_SIGNATURE,
	JWT_EXPIRED,
	JWT_NOT_YET_VALID,
	JWT_ISSUER,
	JWT_AUDIENCE,
	JWT_IDENTITY,	   /* the identity claim is missing or unusable */
	JWT_SCOPE,	   /* valid, but a required scope is missing: 403 */
};

struct jwt_policy {
	const char *issuer;
	char *const *audiences;
	size_t naudiences;
	char *const *scopes;	/* required, all of them */
	size_t nscopes;
	char *const *algs;	/* allowed */
	size_t nalgs;
	long skew_s;
	const char *identity_claim;
	time_t now;
};

/*
 * Validate `token` (len bytes, not NUL-terminated necessarily). On JWT_OK
 * the identity is in identity[identity_len]. `why` says what failed for
 * the log, never quoting the token or a key.
 */
enum jwt_status jwt_verify(const char *token, size_t len, const struct jwks *keys,
			   const struct jwt_policy *p, char *identity, size_t identity_len,
			   char *why, size_t why_len);
/*
 * Strict base64url (RFC 4648 section 5): no padding, no other character,
 * zero unused bits. Returns 0 with *out (caller frees, NUL-terminated past
 * *outlen) or -1.
 */
int jwt_b64url_decode(const char *in, size_t len, unsigned char **out, size_t *outlen);
/* A short name of a status for the log ("expired", "bad signature", ...). */
const char *jwt_status_text(enum jwt_status s);

#endif
