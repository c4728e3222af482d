/*
 * auth_config.h - the authentication keys of codeexecd.yaml: their value
 * checks, the checks across them and the Entra ID preset of seed 000.
 *
 * config.c declares the keys (auth.*, entra_client_id, entra_tenant_id) and
 * calls these; the supervisor's auth.c uses what they leave in struct config.
 */
#ifndef COMMON_AUTH_CONFIG_H
#define COMMON_AUTH_CONFIG_H

#include <stddef.h>

struct config;

/* The Entra preset's endpoints, {tenant} replaced. */
#define AUTH_ENTRA_ISSUER_FMT "https://login.microsoftonline.com/%s/v2.0"
#define AUTH_ENTRA_JWKS_FMT "https://login.microsoftonline.com/%s/discovery/v2.0/keys"

/* An Entra tenant or client id: "" or 1-64 of [A-Za-z0-9.-]. */
int auth_check_entra_id(const char *v, char *why, size_t why_len);
/*
 * "" or an http(s) URL (https only when `https_only`) without whitespace,
 * quotes or backslashes: these values go into a quoted header parameter.
 */
int auth_check_url(const char *v, int https_only, char *why, size_t why_len);
/* A scope token: printable, no space, quote or backslash. */
int auth_check_scope(const char *v, char *why, size_t why_len);
/* A JWS algorithm codeexecd verifies (never none or HS*). */
int auth_check_alg(const char *v, char *why, size_t why_len);
/*
 * Apply the Entra preset and check the keys together, once all are read.
 * `mode_set`: auth.mode was written in the file. Returns NULL, or the name
 * of the key at fault with the reason in why.
 */
const char *auth_config_finish(struct config *c, int mode_set, char *why, size_t why_len);

#endif
