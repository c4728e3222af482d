/* auth_jwt.c - see auth_jwt.h. */
#include "autoconf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "auth_jwks.h"
#include "auth_jwt.h"
#include "b64.h"
#include "err.h"
#include "json_member.h"
#include "xmalloc.h"

/* What each allowed algorithm needs of its key and how it verifies. */
struct alg {
	const char *name;
	enum jwk_type type;
	int ec_bits;	/* JWK_EC: the curve's; 0 for RSA */
	int pss;	/* RSA-PSS rather than PKCS#1 v1.5 */
	const char *md;
};

static const struct alg algs[] = {
	{"RS256", JWK_RSA, 0, 0, "SHA256"}, {"RS384", JWK_RSA, 0, 0, "SHA384"},
	{"RS512", JWK_RSA, 0, 0, "SHA512"}, {"PS256", JWK_RSA, 0, 1, "SHA256"},
	{"PS384", JWK_RSA, 0, 1, "SHA384"}, {"PS512", JWK_RSA, 0, 1, "SHA512"},
	{"ES256", JWK_EC, 256, 0, "SHA256"}, {"ES384", JWK_EC, 384, 0, "SHA384"},
};

const char *
jwt_status_text(enum jwt_status s)
{
	switch (s) {
	case JWT_OK: return "valid";
	case JWT_MALFORMED: return "malformed token";
	case JWT_ALG: return "algorithm not allowed for the key";
	case JWT_UNKNOWN_KID: return "unknown key id";
	case JWT_SIGNATURE: return "bad signature";
	case JWT_EXPIRED: return "expired";
	case JWT_NOT_YET_VALID: return "not yet valid";
	case JWT_ISSUER: return "wrong issuer";
	case JWT_AUDIENCE: return "wrong audience";
	case JWT_IDENTITY: return "no usable identity claim";
	case JWT_SCOPE: return "insufficient scope";
	}
	return "?";
}

int
jwt_b64url_decode(const char *in, size_t len, unsigned char **out, size_t *outlen)
{
	if (len > JWKS_MAX_BYTES * 2)
		return -1;
	return b64_decode(in, len, B64_URL, out, outlen);
}

/* Decode one base64url part into a JSON object (caller owns), or NULL. */
static struct json_object *
part_object(const char *p, size_t len)
{
	unsigned char *raw;
	size_t n;

	if (jwt_b64url_decode(p, len, &raw, &n) == -1)
		return NULL;
	struct json_object *o = auth_json_object((const char *)raw, n);
	free(raw);
	return o;
}

static const struct alg *
alg_named(const char *name, const struct jwt_policy *p)
{
	int allowed = 0;

	for (size_t i = 0; i < p->nalgs; i++)
		if (strcmp(p->algs[i], name) == 0)
			allowed = 1;
	for (size_t i = 0; allowed && i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strcmp(algs[i].name, name) == 0)
			return &algs[i];
	return NULL;
}

/* A JWS ECDSA signature (R || S, `half` bytes each) as DER; caller frees. */
static unsigned char *
ecdsa_der(const unsigned char *sig, size_t half, size_t *der_len)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, (int)half, NULL), *s = BN_bin2bn(sig + half, (int)half, NULL);
	unsigned char *der = NULL;
	int n = -1;

	if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s) == 1) {
		r = s = NULL; /* es owns them */
		n = i2d_ECDSA_SIG(es, &der);
	}
	BN_free(r);
	BN_free(s);
	ECDSA_SIG_free(es);
	if (n <= 0)
		return NULL;
	*der_len = (size_t)n;
	return der;
}

/* 1 if `sig` signs `data` under `key` with `a`, else 0. */
static int
signature_ok(const struct alg *a, const struct jwk *key, const char *data, size_t data_len,
	     const unsigned char *sig, size_t sig_len)
{
	unsigned char *der = NULL;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	int ok = 0;

	if (a->type == JWK_EC) {
		size_t half = (size_t)a->ec_bits / 8;
		if (sig_len != 2 * half || (der = ecdsa_der(sig, half, &sig_len)) == NULL)
			goto out;
		sig = der;
	}
	if (md == NULL || EVP_DigestVerifyInit_ex(md, &pctx, a->md, NULL, NULL, key->pkey,
						  NULL) != 1)
		goto out;
	if (a->type == JWK_RSA) {
		int pad = a->pss ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING;
		if (EVP_PKEY_CTX_set_rsa_padding(pctx, pad) != 1)
			goto out;
		/* RFC 7518 3.5: the salt is as long as the digest. */
		if (a->pss && EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1)
			goto out;
	}
	ok = EVP_DigestVerify(md, sig, sig_len, (const unsigned char *)data, data_len) == 1;
out:
	EVP_MD_CTX_free(md);
	OPENSSL_free(der);
	return ok;
}

/* A NumericDate claim as seconds; -1 if absent, -2 if not a number. */
static double
date_claim(struct json_object *claims, const char *name)
{
	struct json_object *v;

	if (!json_object_object_get_ex(claims, name, &v))
		return -1;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return -2;
	double d = json_object_get_double(v);
	return isfinite(d) && d >= 0 ? d : -2;
}

/* Whether aud (a string or an array of strings) names one of the audiences. */
static int
audience_ok(struct json_object *claims, const struct jwt_policy *p)
{
	struct json_object *aud;

	if (!json_object_object_get_ex(claims, "aud", &aud))
		return 0;
	size_t n = json_object_is_type(aud, json_type_array) ? json_object_array_length(aud) : 1;
	for (size_t i = 0; i < n; i++) {
		struct json_object *v =
			json_object_is_type(aud, json_type_array) ? json_object_array_get_idx(aud, i)
								  : aud;
		if (!json_object_is_type(v, json_type_string))
			continue;
		for (size_t j = 0; j < p->naudiences; j++)
			if (strcmp(json_object_get_string(v), p->audiences[j]) == 0)
				return 1;
	}
	return 0;
}

/* Whether space-separated `list` holds `scope`. */
static int
scope_in(const char *list, const char *scope)
{
	size_t n = strlen(scope);

	for (const char *p = list; *p;) {
		while (*p == ' ')
			p++;
		size_t w = strcspn(p, " ");
		if (w == n && strncmp(p, scope, n) == 0)
			return 1;
		p += w;
	}
	return 0;
}

/* Whether scp (a string or an array, Entra's) or scope grants `scope`. */
static int
has_scope(struct json_object *claims, const char *scope)
{
	struct json_object *v;

	if (json_object_object_get_ex(claims, "scp", &v) &&
	    json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *s = json_object_array_get_idx(v, i);
			if (json_object_is_type(s, json_type_string) &&
			    strcmp(json_object_get_string(s), scope) == 0)
				return 1;
		}
	}
	return scope_in(json_member_str(claims, "scp"), scope) ||
	       scope_in(json_member_str(claims, "scope"), scope);
}

/* Copy the identity claim if it is a usable name; -1 if not. */
static int
identity_of(struct json_object *claims, const char *claim, char *out, size_t out_len)
{
	const char *id = json_member_str(claims, claim);
	size_t n = strlen(id);

	if (n == 0 || n > JWT_IDENTITY_MAX || n >= out_len)
		return -1;
	/* It names sessions in logs and a kernel's environment: plain ASCII only. */
	for (const char *c = id; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '"' ||
		    *c == '\\')
			return -1;
	memcpy(out, id, n + 1);
	return 0;
}

/* The claims after the signature held. */
static enum jwt_status
check_claims(struct json_object *claims, const struct jwt_policy *p, char *identity,
	     size_t identity_len, char *why, size_t why_len)
{
	double exp = date_claim(claims, "exp"), nbf = date_claim(claims, "nbf");
	double now = (double)p->now;

	if (exp < 0) {
		err_set(why, why_len, "no numeric exp claim");
		return JWT_MALFORMED;
	}
	if (now > exp + (double)p->skew_s)
		return JWT_EXPIRED;
	if (nbf == -2) {
		err_set(why, why_len, "nbf is not a number");
		return JWT_MALFORMED;
	}
	if (nbf >= 0 && now + (double)p->skew_s < nbf)
		return JWT_NOT_YET_VALID;
	if (strcmp(json_member_str(claims, "iss"), p->issuer) != 0)
		return JWT_ISSUER;
	if (!audience_ok(claims, p))
		return JWT_AUDIENCE;
	if (identity_of(claims, p->identity_claim, identity, identity_len) == -1) {
		err_set(why, why_len, "claim %s is missing, empty, too long or not plain ASCII",
			p->identity_claim);
		return JWT_IDENTITY;
	}
	for (size_t i = 0; i < p->nscopes; i++)
		if (!has_scope(claims, p->scopes[i])) {
			err_set(why, why_len, "scope %s not granted", p->scopes[i]);
			return JWT_SCOPE;
		}
	return JWT_OK;
}

/* The header's alg and key, into *a and *key. */
static enum jwt_status
check_header(struct json_object *hdr, const struct jwks *keys, const struct jwt_policy *p,
	     const struct alg **a, const struct jwk **key, char *why, size_t why_len)
{
	const char *alg = json_member_str(hdr, "alg"), *kid = json_member_str(hdr, "kid");
	struct json_object *v;

	/* Extensions we would have to understand (RFC 7515 4.1.11): we do not. */
	if (json_object_object_get_ex(hdr, "crit", &v)) {
		err_set(why, why_len, "crit header");
		return JWT_MALFORMED;
	}
	if ((*a = alg_named(alg, p)) == NULL) {
		/* alg is the sender's text: the log gets only whether it was there. */
		err_set(why, why_len, "%s", alg[0] ? "alg not allowed" : "no alg");
		return JWT_ALG;
	}
	if (kid[0] == '\0') {
		err_set(why, why_len, "no kid");
		return JWT_MALFORMED;
	}
	if ((*key = jwks_find(keys, kid)) == NULL)
		return JWT_UNKNOWN_KID;
	/* The key decides what it verifies: an RSA key never serves ES*, nor HS*. */
	if ((*key)->type != (*a)->type || ((*a)->type == JWK_EC && (*key)->ec_bits !=
							(*a)->ec_bits) ||
	    ((*key)->alg[0] != '\0' && strcmp((*key)->alg, (*a)->name) != 0)) {
		err_set(why, why_len, "alg %s does not fit the key's type", (*a)->name);
		return JWT_ALG;
	}
	return JWT_OK;
}

enum jwt_status
jwt_verify(const char *token, size_t len, const struct jwks *keys, const struct jwt_policy *p,
	   char *identity, size_t identity_len, char *why, size_t why_len)
{
	const char *dot1, *dot2;
	struct json_object *hdr = NULL, *claims = NULL;
	unsigned char *sig = NULL;
	size_t sig_len;
	const struct alg *a;
	const struct jwk *key;
	enum jwt_status st = JWT_MALFORMED;

	err_set(why, why_len, "%s", "");
	if (len == 0 || len > JWT_MAX_BYTES) {
		err_set(why, why_len, "%zu bytes", len);
		return JWT_MALFORMED;
	}
	/* Exactly three parts: a JWE (five) or anything else is refused. */
	if ((dot1 = memchr(token, '.', len)) == NULL ||
	    (dot2 = memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token))) == NULL ||
	    memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)) != NULL) {
		err_set(why, why_len, "not three parts");
		return JWT_MALFORMED;
	}
	if ((hdr = part_object(token, (size_t)(dot1 - token))) == NULL ||
	    (claims = part_object(dot1 + 1, (size_t)(dot2 - dot1 - 1))) == NULL ||
	    jwt_b64url_decode(dot2 + 1, len - (size_t)(dot2 + 1 - token), &sig, &sig_len) == -1) {
		err_set(why, why_len, "a part is not strict base64url of a JSON object");
		goto out;
	}
	if ((st = check_header(hdr, keys, p, &a, &key, why, why_len)) != JWT_OK)
		goto out;
	/* Over the exact bytes sent, never a re-encoding. */
	if (!signature_ok(a, key, token, (size_t)(dot2 - token), sig, sig_len)) {
		st = JWT_SIGNATURE;
		goto out;
	}
	st = check_claims(claims, p, identity, identity_len, why, why_len);
out:
	free(sig);
	json_object_put(hdr);
	json_object_put(claims);
	return st;
}
