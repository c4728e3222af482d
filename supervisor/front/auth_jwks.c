/* auth_jwks.c - see auth_jwks.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include "auth_jwks.h"
#include "auth_jwt.h"
#include "buf.h"
#include "curl_req.h"
#include "clock.h"
#include "err.h"
#include "json_member.h"
#include "json_strict.h"
#include "log.h"
#include "xmalloc.h"

#define JWKS_JSON_DEPTH 8
#define JWKS_TIMEOUT_S 10L
#define JWK_KID_MAX 256

struct json_object *
auth_json_object(const char *text, size_t len)
{
	struct json_strict js;

	if (len > JWKS_MAX_BYTES || json_strict_check(text, len, JWKS_JSON_DEPTH, &js) == -1 ||
	    js.has_nul)
		return NULL;
	struct json_tokener *tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	int ok = json_tokener_get_error(tok) == json_tokener_success &&
		 json_tokener_get_parse_end(tok) == len && json_object_is_type(o, json_type_object);
	json_tokener_free(tok);
	if (!ok) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The base64url member `name` of a JWK as a BIGNUM (caller frees), or NULL. */
static BIGNUM *
member_bn(struct json_object *k, const char *name)
{
	const char *s = json_member_str(k, name);
	unsigned char *raw;
	size_t n;

	if (jwt_b64url_decode(s, strlen(s), &raw, &n) == -1)
		return NULL;
	BIGNUM *bn = n > 0 ? BN_bin2bn(raw, (int)n, NULL) : NULL;
	free(raw);
	return bn;
}

/* An EVP_PKEY of type `name` from `params`, public only, or NULL. */
static EVP_PKEY *
pkey_from(const char *name, OSSL_PARAM *params)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, name, NULL);
	EVP_PKEY *pkey = NULL;

	if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

/* An RSA public key of 2048 bits or more from n and e, or NULL. */
static EVP_PKEY *
rsa_key(struct json_object *k)
{
	BIGNUM *n = member_bn(k, "n"), *e = member_bn(k, "e");
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY *pkey = NULL;

	if (n && e && BN_num_bits(n) >= 2048 && BN_num_bits(n) <= 16384 &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL)
		pkey = pkey_from("RSA", params);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(e);
	return pkey;
}

/* A coordinate of `bytes` bytes into out, or -1. */
static int
ec_coord(struct json_object *k, const char *name, unsigned char *out, size_t bytes)
{
	const char *s = json_member_str(k, name);
	unsigned char *raw;
	size_t n;

	if (jwt_b64url_decode(s, strlen(s), &raw, &n) == -1)
		return -1;
	int ok = n == bytes;
	if (ok)
		memcpy(out, raw, n);
	free(raw);
	return ok ? 0 : -1;
}

/* An EC public key on P-256 or P-384 (its bits in *bits), checked on the curve. */
static EVP_PKEY *
ec_key(struct json_object *k, int *bits)
{
	const char *crv = json_member_str(k, "crv");
	const char *group;
	unsigned char point[1 + 2 * 48];
	size_t bytes;

	if (strcmp(crv, "P-256") == 0) {
		group = "prime256v1", bytes = 32, *bits = 256;
	} else if (strcmp(crv, "P-384") == 0) {
		group = "secp384r1", bytes = 48, *bits = 384;
	} else {
		return NULL;
	}
	point[0] = 0x04; /* uncompressed */
	if (ec_coord(k, "x", point + 1, bytes) == -1 ||
	    ec_coord(k, "y", point + 1 + bytes, bytes) == -1)
		return NULL;
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY *pkey = NULL;
	if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point,
					     1 + 2 * bytes) &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL)
		pkey = pkey_from("EC", params);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	if (pkey != NULL) {
		/* A point off the curve would leak the verifier's nothing, but is no key. */
		EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
		int ok = ctx != NULL && EVP_PKEY_public_check(ctx) == 1;
		EVP_PKEY_CTX_free(ctx);
		if (!ok) {
			EVP_PKEY_free(pkey);
			pkey = NULL;
		}
	}
	return pkey;
}

/* Read one JWK into `out`; -1 if it is not a usable signature key. */
static int
jwk_read(struct json_object *k, struct jwk *out)
{
	const char *kty = json_member_str(k, "kty"), *kid = json_member_str(k, "kid");
	const char *use = json_member_str(k, "use"), *alg = json_member_str(k, "alg");
	struct json_object *v;

	if (!json_object_is_type(k, json_type_object) || kid[0] == '\0' ||
	    strlen(kid) > JWK_KID_MAX || strlen(alg) >= sizeof(out->alg))
		return -1;
	/* An encryption key, or one restricted to other operations, never verifies. */
	if (json_object_object_get_ex(k, "use", &v) && strcmp(use, "sig") != 0)
		return -1;
	memset(out, 0, sizeof(*out));
	if (strcmp(kty, "RSA") == 0) {
		out->type = JWK_RSA;
		out->pkey = rsa_key(k);
	} else if (strcmp(kty, "EC") == 0) {
		out->type = JWK_EC;
		out->pkey = ec_key(k, &out->ec_bits);
	}
	if (out->pkey == NULL)
		return -1;
	out->kid = xstrdup(kid);
	snprintf(out->alg, sizeof(out->alg), "%s", alg);
	return 0;
}

struct jwks *
jwks_parse(const char *text, size_t len, size_t *skipped, char *why, size_t why_len)
{
	struct json_object *doc = auth_json_object(text, len), *keys;

	*skipped = 0;
	if (doc == NULL) {
		err_set(why, why_len, "not a JSON object of at most %d bytes", JWKS_MAX_BYTES);
		return NULL;
	}
	if (!json_object_object_get_ex(doc, "keys", &keys) ||
	    !json_object_is_type(keys, json_type_array)) {
		json_object_put(doc);
		err_set(why, why_len, "has no \"keys\" array");
		return NULL;
	}
	struct jwks *set = xcalloc(1, sizeof(*set));
	size_t n = json_object_array_length(keys);
	set->refs = 1;
	set->v = xcalloc(n < JWKS_MAX_KEYS ? n + 1 : JWKS_MAX_KEYS, sizeof(*set->v));
	for (size_t i = 0; i < n; i++) {
		if (set->n == JWKS_MAX_KEYS ||
		    jwk_read(json_object_array_get_idx(keys, i), &set->v[set->n]) == -1) {
			(*skipped)++;
			continue;
		}
		/* Two keys of one kid: which one a token meant is unknowable. */
		if (jwks_find(set, set->v[set->n].kid) != NULL) {
			(*skipped)++;
			EVP_PKEY_free(set->v[set->n].pkey);
			free(set->v[set->n].kid);
			continue;
		}
		set->n++;
	}
	json_object_put(doc);
	return set;
}

const struct jwk *
jwks_find(const struct jwks *set, const char *kid)
{
	for (size_t i = 0; set != NULL && i < set->n; i++)
		if (strcmp(set->v[i].kid, kid) == 0)
			return &set->v[i];
	return NULL;
}

void
jwks_free(struct jwks *set)
{
	if (set == NULL)
		return;
	for (size_t i = 0; i < set->n; i++) {
		EVP_PKEY_free(set->v[i].pkey);
		free(set->v[i].kid);
	}
	free(set->v);
	free(set);
}

int
jwks_https_get(const char *url, const char *ca_file, char **body, size_t *len, char *why,
	       size_t why_len)
{
	char err[ERR_LEN];
	struct buf b;
	struct curl_res res;
	/* https only, verified, and no redirect elsewhere. */
	struct curl_req req = {
		.url = url,
		.protocols = "https",
		.ca_file = ca_file,
		.connect_timeout_s = JWKS_TIMEOUT_S,
		.timeout_s = JWKS_TIMEOUT_S,
		.max_answer = JWKS_MAX_BYTES,
	};

	buf_init(&b);
	if (curl_req_perform(&req, &b, &res, err, sizeof(err)) == -1 || res.status != 200) {
		buf_free(&b);
		if (res.code != CURLE_OK)
			return err_set(why, why_len, "%s: %s", url, err);
		return err_set(why, why_len, "%s: HTTP status %ld", url, res.status);
	}
	*len = b.len;
	*body = buf_release(&b); /* NUL-terminated for the caller's convenience */
	return 0;
}

/* Whether the mode bits of st let uid/gid (its primary group only) read it. */
static int
readable_by(const struct stat *st, uid_t uid, gid_t gid)
{
	if (st->st_uid == uid)
		return (st->st_mode & S_IRUSR) != 0;
	if (st->st_gid == gid)
		return (st->st_mode & S_IRGRP) != 0;
	return (st->st_mode & S_IROTH) != 0;
}

int
jwks_ca_check(const char *path, uid_t front_uid, gid_t front_gid, char *why, size_t why_len)
{
	struct stat st;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return err_set(why, why_len, "auth.ca_file %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) == -1 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return err_set(why, why_len, "auth.ca_file %s: not a regular file", path);
	}
	if (front_uid != (uid_t)-1 && !readable_by(&st, front_uid, front_gid)) {
		fclose(f);
		return err_set(why, why_len,
			       "auth.ca_file %s: mode %04o, owner %u: the front (uid %u) cannot read "
			       "it; it holds no secret: chmod 644 %s",
			       path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
			       (unsigned)front_uid, path);
	}
	X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (x == NULL)
		return err_set(why, why_len, "auth.ca_file %s: holds no PEM certificate", path);
	X509_free(x);
	return 0;
}

void
jwks_source_init(struct jwks_source *src, const char *issuer, const char *jwks_uri,
		 const char *ca_file)
{
	memset(src, 0, sizeof(*src));
	src->issuer = xstrdup(issuer);
	src->jwks_uri = jwks_uri && jwks_uri[0] ? xstrdup(jwks_uri) : NULL;
	src->ca_file = ca_file && ca_file[0] ? xstrdup(ca_file) : NULL;
	src->get = jwks_https_get;
	src->now = clock_mono;
	pthread_mutex_init(&src->lock, NULL);
	pthread_mutex_init(&src->fetch_lock, NULL);
}

void
jwks_source_free(struct jwks_source *src)
{
	if (src->keys != NULL && --src->keys->refs == 0)
		jwks_free(src->keys);
	pthread_mutex_destroy(&src->lock);
	pthread_mutex_destroy(&src->fetch_lock);
	free(src->issuer);
	free(src->jwks_uri);
	free(src->ca_file);
	memset(src, 0, sizeof(*src));
}

/*
 * OpenID discovery: the jwks_uri of the issuer's openid-configuration,
 * whose issuer must be ours exactly. fetch_lock held.
 */
static int
discover(struct jwks_source *src, char *why, size_t why_len)
{
	size_t ilen = strlen(src->issuer), len;
	char *body = NULL;

	while (ilen > 0 && src->issuer[ilen - 1] == '/')
		ilen--;
	char *url = xasprintf("%.*s/.well-known/openid-configuration", (int)ilen, src->issuer);
	int rc = src->get(url, src->ca_file, &body, &len, why, why_len);
	free(url);
	if (rc == -1)
		return -1;
	struct json_object *doc = auth_json_object(body, len);
	free(body);
	if (doc == NULL)
		return err_set(why, why_len, "the openid-configuration of %s is not a JSON object",
			       src->issuer);
	const char *iss = json_member_str(doc, "issuer"), *uri = json_member_str(doc, "jwks_uri");
	if (strcmp(iss, src->issuer) != 0)
		rc = err_set(why, why_len,
			     "the openid-configuration of %s names another issuer", src->issuer);
	else if (strncmp(uri, "https://", 8) != 0)
		rc = err_set(why, why_len,
			     "the openid-configuration of %s has no https jwks_uri", src->issuer);
	else
		src->jwks_uri = xstrdup(uri);
	json_object_put(doc);
	return rc;
}

/* Fetch the set and swap it in; on failure keep the old one. fetch_lock held. */
static void
fetch(struct jwks_source *src)
{
	char why[ERR_LEN];
	char *body = NULL;
	size_t len, skipped;
	struct jwks *set = NULL;

	src->tried = src->now();
	src->fetches++;
	if (src->jwks_uri == NULL && discover(src, why, sizeof(why)) == -1)
		goto fail;
	if (src->get(src->jwks_uri, src->ca_file, &body, &len, why, sizeof(why)) == -1)
		goto fail;
	set = jwks_parse(body, len, &skipped, why, sizeof(why));
	free(body);
	if (set == NULL) {
		char what[ERR_LEN];
		snprintf(what, sizeof(what), "%s", why);
		err_set(why, sizeof(why), "%s: %s", src->jwks_uri, what);
		goto fail;
	}
	/* Key ids only: never key material. */
	log_info("auth: JWKS of %s read: %zu keys, %zu skipped", src->issuer, set->n, skipped);
	pthread_mutex_lock(&src->lock);
	struct jwks *old = src->keys;
	src->keys = set;
	src->fetched = src->tried;
	if (old != NULL && --old->refs == 0)
		jwks_free(old);
	pthread_mutex_unlock(&src->lock);
	return;
fail:
	log_warnx("auth: cannot fetch the keys of %s (%s); keeping %s", src->issuer, why,
		  src->keys ? "the keys fetched before" : "none: every token is refused");
}

/* The current set, referenced, and (when `fetched` is not NULL) its time. */
static struct jwks *
current(struct jwks_source *src, double *fetched)
{
	pthread_mutex_lock(&src->lock);
	struct jwks *set = src->keys;
	if (set != NULL)
		set->refs++;
	if (fetched != NULL)
		*fetched = src->fetched;
	pthread_mutex_unlock(&src->lock);
	return set;
}

/* Fetch unless the last attempt is under JWKS_REFRESH_MIN_S old. fetch_lock held. */
static void
fetch_if_due(struct jwks_source *src)
{
	if (src->tried == 0 || src->now() - src->tried >= JWKS_REFRESH_MIN_S)
		fetch(src);
}

struct jwks *
jwks_source_get(struct jwks_source *src)
{
	double fetched;
	struct jwks *set = current(src, &fetched);

	if (set != NULL && src->now() - fetched < JWKS_MAX_AGE_S)
		return set;
	jwks_source_put(src, set);
	pthread_mutex_lock(&src->fetch_lock);
	if (src->keys == NULL || src->now() - src->fetched >= JWKS_MAX_AGE_S)
		fetch_if_due(src);
	pthread_mutex_unlock(&src->fetch_lock);
	return current(src, NULL);
}

struct jwks *
jwks_source_refresh(struct jwks_source *src, const struct jwks *seen)
{
	pthread_mutex_lock(&src->fetch_lock);
	/* Another thread may have fetched a newer set while this one waited. */
	if (src->keys == seen)
		fetch_if_due(src);
	pthread_mutex_unlock(&src->fetch_lock);
	return current(src, NULL);
}

void
jwks_source_put(struct jwks_source *src, struct jwks *set)
{
	if (set == NULL)
		return;
	pthread_mutex_lock(&src->lock);
	int last = --set->refs == 0;
	pthread_mutex_unlock(&src->lock);
	if (last)
		jwks_free(set);
}
