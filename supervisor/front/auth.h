/*
 * auth.h - who is calling: the auth.mode of the configuration applied to
 * one request's Authorization header, and the RFC 9728 metadata.
 *
 * none: every caller is "anonymous" (loopback, or behind an acknowledged
 * boundary). tokens: a bearer token whose SHA-256 is listed in
 * auth.tokens_file names its identity. oauth: a JWT of auth.issuer
 * (auth_jwt.h), its keys fetched and cached (auth_jwks.h). No token, token
 * hash or key ever reaches a log line: results carry only identities and
 * reasons.
 */
#ifndef SUPERVISOR_AUTH_H
#define SUPERVISOR_AUTH_H

#include <stddef.h>

struct config;

#define AUTH_IDENTITY_LEN 128
#define AUTH_ANONYMOUS "anonymous"
#define AUTH_METADATA_PATH "/.well-known/oauth-protected-resource"

struct auth_result {
	int status;		/* 0: allowed; else the HTTP status: 400, 401 or 403 */
	const char *error;	/* RFC 6750 error code for WWW-Authenticate, or NULL */
	char identity[AUTH_IDENTITY_LEN];
	char why[256];		/* for the log and the body: never the token */
};

/*
 * Set up from `cfg` (borrowed for the daemon's lifetime), once, before the
 * first request; `port` is the bound listen port, for the default
 * auth.resource. Reads auth.tokens_file from the copy the parent opened
 * and checked (secret_file.h). Returns 0 or -1 with why.
 */
int auth_init(const struct config *cfg, int port, char *why, size_t why_len);
/*
 * SIGHUP: read auth.tokens_file again (mode tokens; the parent's fresh
 * copy, sent before the signal), so an identity can be
 * added or its token revoked without a restart; a file that cannot be used
 * is logged and the tokens read before stay. Other auth settings need a
 * restart.
 */
void auth_reload(void);
/* Fetch the issuer's keys now, so the first caller does not wait (oauth). */
void auth_prefetch(void);
void auth_shutdown(void);
/* Nonzero unless auth.mode is none. */
int auth_enabled(void);
/*
 * Decide one request: `authorization` is its Authorization header (NULL
 * when absent), `query` its query string (NULL or ""), refused when it
 * carries access_token. Never blocks longer than one JWKS fetch.
 */
void auth_check(const char *authorization, const char *query, struct auth_result *r);
/*
 * The WWW-Authenticate value for a refusal `r` (status 401 or 403; also
 * 400), into out[len]: in mode oauth it names the metadata and the scopes
 * needed; in mode tokens it is a plain Bearer challenge with a realm.
 */
void auth_challenge(const struct auth_result *r, char *out, size_t len);
/* The RFC 9728 document (caller frees), or NULL unless auth.mode is oauth:
 * mode tokens has no authorization server to name. */
char *auth_metadata_json(void);
/* The resource identifier (auth.resource or derived); "" when auth is off. */
const char *auth_resource(void);

/*
 * Read a tokens file: "IDENTITY: SHA256HEX" lines, # comments and blank
 * lines, from the copy of `path` that secret_file_open made (its checks:
 * secret_file.h).
 * Returns the count of entries (the caller frees *ids and *hashes with
 * auth_tokens_free) or -1 with why (naming the line, never its hash).
 */
int auth_tokens_read(const char *path, char ***ids, unsigned char (**hashes)[32], char *why,
		     size_t why_len);
void auth_tokens_free(char **ids, unsigned char (*hashes)[32], int n);
/* Read and drop a tokens file, before the fork and for codeexecd -n. 0, or -1 with why. */
int auth_tokens_check(const char *path, char *why, size_t why_len);
/*
 * The identity whose hash is SHA-256(token), compared in constant time
 * against every entry, into out[out_len]; -1 when none matches.
 */
int auth_tokens_match(char *const *ids, unsigned char (*hashes)[32], int n, const char *token,
		      size_t token_len, char *out, size_t out_len);

#endif
