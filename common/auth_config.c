/* auth_config.c - see auth_config.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_config.h"
#include "config.h"
#include "err.h"
#include "xmalloc.h"

/* What auth.allowed_algorithms may hold: asymmetric JWS algorithms only. */
static const char *const known_algs[] = {
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", NULL,
};

int
auth_check_entra_id(const char *v, char *why, size_t why_len)
{
	size_t n = strlen(v);

	if (n > 64)
		return err_set(why, why_len, "longer than 64 characters");
	for (const char *p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			return err_set(why, why_len,
				       "may hold only letters, digits, '-' and '.' (a GUID or a "
				       "domain name)");
	return 0;
}

/* Nonzero if `c` may not appear in a value put in a quoted header parameter. */
static int
header_unsafe(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f || c == '"' || c == '\\';
}

int
auth_check_url(const char *v, int https_only, char *why, size_t why_len)
{
	if (v[0] == '\0')
		return 0;
	if (strncmp(v, "https://", 8) != 0 && (https_only || strncmp(v, "http://", 7) != 0))
		return err_set(why, why_len, "must be an %s URL", https_only ? "https" : "http(s)");
	if (strlen(v) > 1024)
		return err_set(why, why_len, "longer than 1024 characters");
	for (const char *p = v; *p; p++)
		if (header_unsafe((unsigned char)*p))
			return err_set(why, why_len,
				       "may not hold spaces, quotes, backslashes or non-ASCII "
				       "characters (percent-encode them)");
	const char *host = strstr(v, "://") + 3;
	if (*host == '\0' || *host == '/')
		return err_set(why, why_len, "has no host");
	return 0;
}

int
auth_check_scope(const char *v, char *why, size_t why_len)
{
	if (v[0] == '\0')
		return err_set(why, why_len, "must not be empty");
	for (const char *p = v; *p; p++)
		if (header_unsafe((unsigned char)*p))
			return err_set(why, why_len,
				       "may not hold spaces, quotes, backslashes or non-ASCII "
				       "characters");
	return 0;
}

int
auth_check_alg(const char *v, char *why, size_t why_len)
{
	for (size_t i = 0; known_algs[i]; i++)
		if (strcmp(v, known_algs[i]) == 0)
			return 0;
	return err_set(why, why_len,
		       "\"%.16s\" is not one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 "
		       "(none and HS* are never accepted)", v);
}

/* Replace *field by a formatted string. */
static void
set_str(char **field, char *value)
{
	free(*field);
	*field = value;
}

static void
list_add(struct strlist *l, char *s)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = s;
}

/* Seed 000's Entra preset: fill what the file left unset. */
static const char *
entra_preset(struct config *c, int mode_set, char *why, size_t why_len)
{
	int client = c->entra_client_id[0] != '\0', tenant = c->entra_tenant_id[0] != '\0';

	if (!client && !tenant)
		return NULL;
	if (!client || !tenant) {
		err_set(why, why_len, "the Entra preset needs both entra_client_id and "
				      "entra_tenant_id");
		return client ? "entra_client_id" : "entra_tenant_id";
	}
	if (mode_set && c->auth_mode != AUTH_OAUTH) {
		err_set(why, why_len, "auth.mode: the Entra preset (entra_client_id) needs "
				      "mode oauth");
		return "auth.mode";
	}
	c->auth_mode = AUTH_OAUTH;
	if (c->auth_issuer[0] == '\0')
		set_str(&c->auth_issuer, xasprintf(AUTH_ENTRA_ISSUER_FMT, c->entra_tenant_id));
	if (c->auth_jwks_uri[0] == '\0')
		set_str(&c->auth_jwks_uri, xasprintf(AUTH_ENTRA_JWKS_FMT, c->entra_tenant_id));
	if (c->auth_audience.n == 0) {
		/* Entra puts the client id, or its api:// URI, in aud. */
		list_add(&c->auth_audience, xstrdup(c->entra_client_id));
		list_add(&c->auth_audience, xasprintf("api://%s", c->entra_client_id));
	}
	if (c->auth_identity_claim[0] == '\0')
		set_str(&c->auth_identity_claim, xstrdup("oid"));
	return NULL;
}

const char *
auth_config_finish(struct config *c, int mode_set, char *why, size_t why_len)
{
	const char *key = entra_preset(c, mode_set, why, why_len);

	if (key != NULL)
		return key;
	if (c->auth_identity_claim[0] == '\0')
		set_str(&c->auth_identity_claim, xstrdup("sub"));
	if (c->auth_mode == AUTH_OAUTH && c->auth_issuer[0] == '\0') {
		err_set(why, why_len, "auth.mode oauth needs auth.issuer (or entra_tenant_id)");
		return "auth.mode";
	}
	if (c->auth_mode == AUTH_OAUTH && c->auth_allowed_algorithms.n == 0) {
		err_set(why, why_len, "auth.allowed_algorithms: mode oauth needs at least one");
		return "auth.allowed_algorithms";
	}
	if (c->auth_mode == AUTH_TOKENS && c->auth_tokens_file[0] == '\0') {
		err_set(why, why_len, "auth.mode tokens needs auth.tokens_file");
		return "auth.mode";
	}
	return NULL;
}
