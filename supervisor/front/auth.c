/* auth.c - see auth.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "auth.h"
#include "auth_jwks.h"
#include "auth_jwt.h"
#include "buf.h"
#include "config.h"
#include "err.h"
#include "log.h"
#include "secret_file.h"
#include "xmalloc.h"

#define TOKENS_MAX 4096

static const struct config *cfg;
static char *resource;		 /* auth.resource, or http://LISTEN/mcp */
static char **audiences;	 /* auth.audience, or the resource */
static size_t naudiences;
static struct jwks_source source; /* mode oauth */
/* mode tokens: the file's entries, replaced whole by auth_reload. */
static pthread_rwlock_t tokens_lock = PTHREAD_RWLOCK_INITIALIZER;
static char **token_ids;
static unsigned char (*token_hashes)[32];
static int ntokens;

int
auth_enabled(void)
{
	return cfg != NULL && cfg->auth_mode != AUTH_NONE;
}

const char *
auth_resource(void)
{
	return resource ? resource : "";
}

/* Nonzero for a character of RFC 6750's b64token before its trailing '='s. */
static int
b64token_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

/*
 * The credentials of a Bearer Authorization value: the scheme in any case
 * (RFC 9110 11.1), one or more spaces, one b64token and nothing after.
 * Returns 1 with the token, 0 when the scheme is another, -1 when malformed.
 */
static int
bearer_token(const char *h, const char **tok, size_t *len)
{
	if (strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\0'))
		return 0;
	h += 6;
	while (*h == ' ')
		h++;
	const char *t = h;
	while (b64token_char(*h))
		h++;
	if (h == t)
		return -1;
	while (*h == '=')
		h++;
	if (*h != '\0')
		return -1;
	*tok = t;
	*len = (size_t)(h - t);
	return 1;
}

/* Nonzero if a query string has an access_token parameter (RFC 6750 2.3). */
static int
query_has_token(const char *q)
{
	for (const char *p = q; p && *p; p += strcspn(p, "&"), p += *p == '&') {
		if (strncmp(p, "access_token", 12) == 0 && (p[12] == '=' || p[12] == '&' ||
							      p[12] == '\0'))
			return 1;
	}
	return 0;
}

static void
refuse(struct auth_result *r, int status, const char *error, const char *what)
{
	r->status = status;
	r->error = error;
	snprintf(r->why, sizeof(r->why), "%s", what);
}

/* mode tokens: the listed identity of the token. */
static void
check_static(const char *tok, size_t len, struct auth_result *r)
{
	pthread_rwlock_rdlock(&tokens_lock);
	int rc = auth_tokens_match(token_ids, token_hashes, ntokens, tok, len, r->identity,
				   sizeof(r->identity));
	pthread_rwlock_unlock(&tokens_lock);
	if (rc == -1)
		refuse(r, 401, "invalid_token", "the token is not in auth.tokens_file");
}

/* The policy of the configuration, at this time. */
static void
policy(struct jwt_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->issuer = cfg->auth_issuer;
	p->audiences = audiences;
	p->naudiences = naudiences;
	p->scopes = cfg->auth_required_scopes.v;
	p->nscopes = cfg->auth_required_scopes.n;
	p->algs = cfg->auth_allowed_algorithms.v;
	p->nalgs = cfg->auth_allowed_algorithms.n;
	p->skew_s = cfg->auth_clock_skew_s;
	p->identity_claim = cfg->auth_identity_claim;
	p->now = time(NULL);
}

/* mode oauth: a JWT of the issuer, its key refetched once for an unknown kid. */
static void
check_jwt(const char *tok, size_t len, struct auth_result *r)
{
	struct jwt_policy p;
	char why[200];
	struct jwks *keys = jwks_source_get(&source);
	enum jwt_status st;

	policy(&p);
	st = jwt_verify(tok, len, keys, &p, r->identity, sizeof(r->identity), why, sizeof(why));
	if (st == JWT_UNKNOWN_KID) {
		struct jwks *fresh = jwks_source_refresh(&source, keys);
		jwks_source_put(&source, keys);
		keys = fresh;
		st = jwt_verify(tok, len, keys, &p, r->identity, sizeof(r->identity), why,
				sizeof(why));
	}
	jwks_source_put(&source, keys);
	if (st == JWT_OK)
		return;
	r->identity[0] = '\0';
	r->status = st == JWT_SCOPE ? 403 : 401;
	r->error = st == JWT_SCOPE ? "insufficient_scope" : "invalid_token";
	snprintf(r->why, sizeof(r->why), "%s%s%s", jwt_status_text(st), why[0] ? ": " : "", why);
}

void
auth_check(const char *authorization, const char *query, struct auth_result *r)
{
	const char *tok;
	size_t len;

	memset(r, 0, sizeof(*r));
	if (!auth_enabled()) {
		snprintf(r->identity, sizeof(r->identity), AUTH_ANONYMOUS);
		return;
	}
	/* A token in a URL ends up in logs and histories: never accepted there. */
	if (query != NULL && query_has_token(query))
		return refuse(r, 400, "invalid_request",
			      "a token in the query string is refused; send it in the "
			      "Authorization header");
	int b = authorization ? bearer_token(authorization, &tok, &len) : 0;
	if (b == 0)
		return refuse(r, 401, NULL, "no bearer token");
	if (b == -1 || len > JWT_MAX_BYTES)
		return refuse(r, 401, "invalid_token", "malformed Bearer credentials");
	if (cfg->auth_mode == AUTH_TOKENS)
		check_static(tok, len, r);
	else
		check_jwt(tok, len, r);
}

/* ", scope=\"...\"" of auth.required_scopes at out[n], if there are any. */
static int
add_scope(char *out, size_t len, int n)
{
	if (cfg->auth_required_scopes.n == 0 || n < 0 || (size_t)n >= len)
		return n;
	struct buf b;
	buf_init(&b);
	for (size_t i = 0; i < cfg->auth_required_scopes.n; i++) {
		if (i)
			buf_adds(&b, " ");
		buf_adds(&b, cfg->auth_required_scopes.v[i]);
	}
	n += snprintf(out + n, len - (size_t)n, ", scope=\"%s\"", b.data ? b.data : "");
	buf_free(&b);
	return n;
}

/*
 * oauth: the RFC 9728 metadata, so a client finds the authorization
 * server, and the scopes a token needs. tokens: a plain challenge (RFC
 * 6750 3), since there is no authorization server to find: a client
 * that took the metadata for one would try to register with this daemon.
 */
void
auth_challenge(const struct auth_result *r, char *out, size_t len)
{
	char meta[1200] = "";
	const char *slash = strstr(resource, "://");
	int n;

	if (cfg->auth_mode == AUTH_TOKENS) {
		n = snprintf(out, len, "Bearer realm=\"codeexecd\"");
	} else {
		/* RFC 9728 3.1: the well-known path goes between the host and the path. */
		if (slash != NULL) {
			const char *path = strchr(slash + 3, '/');
			int host_len = path ? (int)(path - resource) : (int)strlen(resource);
			snprintf(meta, sizeof(meta), "%.*s" AUTH_METADATA_PATH "%s", host_len,
				 resource, path && strcmp(path, "/") != 0 ? path : "");
		}
		n = snprintf(out, len, "Bearer resource_metadata=\"%s\"", meta);
	}
	if (r->error != NULL && n > 0 && (size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, ", error=\"%s\"", r->error);
	if (cfg->auth_mode == AUTH_OAUTH && (r->status == 401 || r->status == 403))
		add_scope(out, len, n);
}

/* A JSON array of the strings of `l`, or of `fallback` when `l` is empty. */
static struct json_object *
string_array(const struct strlist *l, const char *fallback)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < l->n; i++)
		json_object_array_add(a, json_object_new_string(l->v[i]));
	if (l->n == 0 && fallback != NULL)
		json_object_array_add(a, json_object_new_string(fallback));
	return a;
}

char *
auth_metadata_json(void)
{
	if (cfg->auth_mode != AUTH_OAUTH)
		return NULL;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "resource", json_object_new_string(resource));
	json_object_object_add(o, "authorization_servers",
			       string_array(&cfg->auth_authorization_servers, cfg->auth_issuer));
	json_object_object_add(o, "scopes_supported",
			       string_array(&cfg->auth_required_scopes, NULL));
	struct json_object *methods = json_object_new_array();
	json_object_array_add(methods, json_object_new_string("header"));
	json_object_object_add(o, "bearer_methods_supported", methods);
	json_object_object_add(o, "resource_name", json_object_new_string(cfg->name));
	char *text = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return text;
}

/* http://LISTEN/mcp: what clients reach when no proxy stands between. */
static char *
derived_resource(int port)
{
	int v6 = strchr(cfg->listen_host, ':') != NULL;

	return xasprintf("http://%s%s%s:%d/mcp", v6 ? "[" : "", cfg->listen_host, v6 ? "]" : "",
			 port);
}

int
auth_init(const struct config *c, int port, char *why, size_t why_len)
{
	cfg = c;
	if (c->auth_mode == AUTH_NONE)
		return 0;
	resource = c->auth_resource[0] ? xstrdup(c->auth_resource) : derived_resource(port);
	if (c->auth_audience.n > 0) {
		audiences = c->auth_audience.v;
		naudiences = c->auth_audience.n;
	} else {
		audiences = xcalloc(1, sizeof(*audiences));
		audiences[0] = resource;
		naudiences = 1;
	}
	if (c->auth_mode == AUTH_TOKENS) {
		ntokens = auth_tokens_read(c->auth_tokens_file, &token_ids, &token_hashes, why,
					   why_len);
		if (ntokens == -1)
			return -1;
		log_info("auth: mode tokens, %d identities from %s", ntokens,
			 c->auth_tokens_file);
		return 0;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return err_set(why, why_len, "auth: cannot initialize libcurl");
	jwks_source_init(&source, c->auth_issuer, c->auth_jwks_uri, c->auth_ca_file);
	log_info("auth: mode oauth, issuer %s, keys from %s, identity claim %s", c->auth_issuer,
		 c->auth_jwks_uri[0] ? c->auth_jwks_uri : "its openid-configuration",
		 c->auth_identity_claim);
	return 0;
}

void
auth_reload(void)
{
	char why[ERR_LEN];
	char **ids;
	unsigned char(*hashes)[32];

	if (cfg == NULL || cfg->auth_mode != AUTH_TOKENS)
		return;
	int n = auth_tokens_read(cfg->auth_tokens_file, &ids, &hashes, why, sizeof(why));
	if (n == -1) {
		log_warnx("auth: %s; the tokens read before stay valid", why);
		return;
	}
	pthread_rwlock_wrlock(&tokens_lock);
	char **old_ids = token_ids;
	unsigned char(*old_hashes)[32] = token_hashes;
	int old_n = ntokens;
	token_ids = ids;
	token_hashes = hashes;
	ntokens = n;
	pthread_rwlock_unlock(&tokens_lock);
	auth_tokens_free(old_ids, old_hashes, old_n);
	log_info("auth: %d identities from %s (reloaded)", n, cfg->auth_tokens_file);
}

void
auth_prefetch(void)
{
	if (cfg != NULL && cfg->auth_mode == AUTH_OAUTH)
		jwks_source_put(&source, jwks_source_get(&source));
}

void
auth_shutdown(void)
{
	if (cfg == NULL || cfg->auth_mode == AUTH_NONE)
		return;
	if (cfg->auth_mode == AUTH_OAUTH) {
		jwks_source_free(&source);
		curl_global_cleanup();
	}
	auth_tokens_free(token_ids, token_hashes, ntokens);
	if (audiences != cfg->auth_audience.v)
		free(audiences);
	free(resource);
	token_ids = NULL;
	token_hashes = NULL;
	ntokens = 0;
	audiences = NULL;
	resource = NULL;
	cfg = NULL;
}

/* 64 hex digits into 32 bytes; -1 if not exactly that. */
static int
hash_hex(const char *s, size_t n, unsigned char out[32])
{
	if (n != 64)
		return -1;
	for (size_t i = 0; i < 32; i++) {
		unsigned v = 0;
		for (size_t j = 0; j < 2; j++) {
			char c = s[2 * i + j];
			v <<= 4;
			if (c >= '0' && c <= '9')
				v |= (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v |= (unsigned)(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				v |= (unsigned)(c - 'A' + 10);
			else
				return -1;
		}
		out[i] = (unsigned char)v;
	}
	return 0;
}

/* Nonzero if `s` (n bytes) may be an identity. */
static int
identity_ok(const char *s, size_t n)
{
	if (n == 0 || n >= AUTH_IDENTITY_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '"' ||
		    s[i] == '\\' || s[i] == ':')
			return 0;
	return 1;
}

int
auth_tokens_read(const char *path, char ***ids, unsigned char (**hashes)[32], char *why,
		 size_t why_len)
{
	size_t text_len;
	char *text = secret_file_read("auth.tokens_file", path, &text_len, why, why_len);
	int n = 0, lineno = 0;

	*ids = NULL;
	*hashes = NULL;
	if (text == NULL)
		return -1;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		lineno++; /* blank lines are skipped by strtok_r: numbers count written ones */
		size_t len = strlen(l);
		while (len > 0 && (l[len - 1] == ' ' || l[len - 1] == '\t' || l[len - 1] == '\r'))
			l[--len] = '\0';
		while (*l == ' ' || *l == '\t')
			l++;
		if (*l == '\0' || *l == '#')
			continue;
		char *colon = strchr(l, ':');
		char *h = colon ? colon + 1 : NULL;
		while (h && (*h == ' ' || *h == '\t'))
			h++;
		unsigned char hash[32];
		if (colon == NULL || !identity_ok(l, (size_t)(colon - l)) ||
		    hash_hex(h, strlen(h), hash) == -1 || n == TOKENS_MAX) {
			err_set(why, why_len,
				"auth.tokens_file %s: entry %d is not \"IDENTITY: SHA256HEX\" "
				"(identity of plain ASCII without spaces, quotes or ':'; 64 hex "
				"digits)", path, lineno);
			OPENSSL_cleanse(text, text_len);
			free(text);
			auth_tokens_free(*ids, *hashes, n);
			*ids = NULL;
			*hashes = NULL;
			return -1;
		}
		*ids = xreallocarray(*ids, (size_t)n + 1, sizeof(**ids));
		*hashes = xreallocarray(*hashes, (size_t)n + 1, sizeof(**hashes));
		(*ids)[n] = xstrndup(l, (size_t)(colon - l));
		memcpy((*hashes)[n], hash, 32);
		n++;
		OPENSSL_cleanse(hash, sizeof(hash));
	}
	/* The digests stay only in *hashes, which auth_tokens_free wipes. */
	OPENSSL_cleanse(text, text_len);
	free(text);
	return n;
}

void
auth_tokens_free(char **ids, unsigned char (*hashes)[32], int n)
{
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	if (hashes != NULL)
		OPENSSL_cleanse(hashes, (size_t)n * sizeof(*hashes));
	free(hashes);
}

int
auth_tokens_check(const char *path, char *why, size_t why_len)
{
	char **ids;
	unsigned char(*hashes)[32];
	int n = auth_tokens_read(path, &ids, &hashes, why, why_len);

	if (n == -1)
		return -1;
	auth_tokens_free(ids, hashes, n);
	return 0;
}

int
auth_tokens_match(char *const *ids, unsigned char (*hashes)[32], int n, const char *token,
		  size_t token_len, char *out, size_t out_len)
{
	unsigned char digest[32];
	unsigned int dlen = 0;
	int found = -1;

	if (EVP_Digest(token, token_len, digest, &dlen, EVP_sha256(), NULL) != 1 || dlen != 32)
		return -1;
	/* Every entry is compared, each in constant time: no early exit to time. */
	for (int i = 0; i < n; i++)
		if (CRYPTO_memcmp(digest, hashes[i], 32) == 0 && found == -1)
			found = i;
	OPENSSL_cleanse(digest, sizeof(digest));
	if (found == -1)
		return -1;
	snprintf(out, out_len, "%s", ids[found]);
	return 0;
}
