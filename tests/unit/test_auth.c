/*
 * test_auth.c - JWT validation, JWKS reading and caching, static tokens and
 * the Authorization header, with RSA and EC P-256 keys the test makes
 * itself (openssl genpkey) and tokens it signs with them: an attack
 * matrix at the level of the validator.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "auth.h"
#include "auth_jwks.h"
#include "auth_jwt.h"
#include "config.h"
#include "secret_file.h"
#include "xmalloc.h"

static char dir[] = "/tmp/test_auth.XXXXXX";
static EVP_PKEY *rsa, *ec, *rsa2;
static char *rsa_pub_pem; /* the RSA public key as PEM: the key-confusion secret */
static struct jwks *keys;
static time_t now;

#define ISS "https://issuer.test"
#define AUD "https://mcp.test/mcp"

static char *const audiences[] = {AUD};
static char *const scopes[] = {"mcp.run"};
static char *const default_algs[] = {"RS256", "ES256"};

/* Generate a key with openssl genpkey and load it. */
static EVP_PKEY *
genkey(const char *name, const char *args)
{
	char *path = xasprintf("%s/%s.pem", dir, name);
	char *cmd = xasprintf("openssl genpkey %s -out %s 2>/dev/null", args, path);
	ck_assert_int_eq(system(cmd), 0);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(k);
	fclose(f);
	free(cmd);
	free(path);
	return k;
}

/* base64url of n bytes, no padding. Caller frees. */
static char *
b64url(const void *in, size_t n)
{
	char *out = xcalloc(4 * ((n + 2) / 3) + 1, 1);
	int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	while (len > 0 && out[len - 1] == '=')
		out[--len] = '\0';
	for (char *p = out; *p; p++)
		*p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
	return out;
}

static char *
b64url_str(const char *s)
{
	return b64url(s, strlen(s));
}

/* A big number parameter of `k`, base64url, `pad` bytes (0: minimal). */
static char *
bn_param(EVP_PKEY *k, const char *name, int pad)
{
	BIGNUM *bn = NULL;
	unsigned char raw[1024];
	ck_assert(EVP_PKEY_get_bn_param(k, name, &bn));
	int n = pad ? BN_bn2binpad(bn, raw, pad) : BN_bn2bin(bn, raw);
	BN_free(bn);
	return b64url(raw, (size_t)n);
}

static char *
rsa_jwk(EVP_PKEY *k, const char *kid, const char *extra)
{
	char *n = bn_param(k, OSSL_PKEY_PARAM_RSA_N, 0), *e = bn_param(k, OSSL_PKEY_PARAM_RSA_E, 0);
	char *s = xasprintf("{\"kty\":\"RSA\",\"kid\":\"%s\",\"use\":\"sig\",\"n\":\"%s\","
			    "\"e\":\"%s\"%s}", kid, n, e, extra);
	free(n);
	free(e);
	return s;
}

static char *
ec_jwk(EVP_PKEY *k, const char *kid)
{
	char *x = bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, 32);
	char *y = bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, 32);
	char *s = xasprintf("{\"kty\":\"EC\",\"kid\":\"%s\",\"crv\":\"P-256\",\"x\":\"%s\","
			    "\"y\":\"%s\"}", kid, x, y);
	free(x);
	free(y);
	return s;
}

/* Sign header.payload (both JSON texts) with `k` for `alg`. Caller frees. */
static char *
sign(const char *alg, EVP_PKEY *k, const char *header, const char *payload)
{
	char *h = b64url_str(header), *p = b64url_str(payload);
	char *input = xasprintf("%s.%s", h, p);
	unsigned char sig[1024];
	size_t sig_len = sizeof(sig);
	char *s;

	if (strcmp(alg, "HS256") == 0) {
		/* Key confusion: the RSA public key's PEM as the HMAC secret. */
		unsigned int n = 0;
		HMAC(EVP_sha256(), rsa_pub_pem, (int)strlen(rsa_pub_pem),
		     (unsigned char *)input, strlen(input), sig, &n);
		sig_len = n;
	} else if (strcmp(alg, "none") == 0) {
		sig_len = 0;
	} else {
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		EVP_PKEY_CTX *pctx;
		ck_assert(EVP_DigestSignInit(md, &pctx, EVP_sha256(), NULL, k) == 1);
		if (alg[0] == 'P') {
			EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
			EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
		}
		ck_assert(EVP_DigestSign(md, sig, &sig_len, (unsigned char *)input,
					 strlen(input)) == 1);
		EVP_MD_CTX_free(md);
		if (alg[0] == 'E') {
			/* DER to JWS's R || S. */
			const unsigned char *d = sig;
			ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &d, (long)sig_len);
			ck_assert_ptr_nonnull(es);
			BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32);
			BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32);
			sig_len = 64;
			ECDSA_SIG_free(es);
		}
	}
	char *sg = b64url(sig, sig_len);
	s = xasprintf("%s.%s", input, sg);
	free(h);
	free(p);
	free(input);
	free(sg);
	return s;
}

/* A token of `alg` and `kid` over `claims`. Caller frees. */
static char *
token(const char *alg, const char *kid, EVP_PKEY *k, const char *claims)
{
	char *header = xasprintf("{\"alg\":\"%s\",\"kid\":\"%s\",\"typ\":\"JWT\"}", alg, kid);
	char *t = sign(alg, k, header, claims);
	free(header);
	return t;
}

/* Claims with exp and nbf relative to now, iss, aud and scp as given. */
static char *
claims(long exp_in, long nbf_in, const char *iss, const char *aud, const char *scp)
{
	return xasprintf("{\"sub\":\"alice\",\"oid\":\"0000-1111\",\"iss\":\"%s\",\"aud\":%s,"
			 "\"exp\":%lld,\"nbf\":%lld,\"iat\":%lld,\"scp\":\"%s\"}",
			 iss, aud, (long long)(now + exp_in), (long long)(now + nbf_in),
			 (long long)now, scp);
}

static void
policy(struct jwt_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->issuer = ISS;
	p->audiences = audiences;
	p->naudiences = 1;
	p->scopes = scopes;
	p->nscopes = 1;
	p->algs = default_algs;
	p->nalgs = 2;
	p->skew_s = 60;
	p->identity_claim = "sub";
	p->now = now;
}

static enum jwt_status
verify(const char *t, char *identity)
{
	struct jwt_policy p;
	char why[256], id[128];

	policy(&p);
	return jwt_verify(t, strlen(t), keys, &p, identity ? identity : id, sizeof(id), why,
			  sizeof(why));
}

static void
setup(void)
{
	size_t skipped;

	now = time(NULL);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	rsa = genkey("rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048");
	rsa2 = genkey("rsa2", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048");
	ec = genkey("ec", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256");
	BIO *b = BIO_new(BIO_s_mem());
	PEM_write_bio_PUBKEY(b, rsa);
	char *data;
	long n = BIO_get_mem_data(b, &data);
	rsa_pub_pem = xstrndup(data, (size_t)n);
	BIO_free(b);

	char *r = rsa_jwk(rsa, "rsa1", ""), *e = ec_jwk(ec, "ec1");
	char *doc = xasprintf("{\"keys\":[%s,%s]}", r, e);
	keys = jwks_parse(doc, strlen(doc), &skipped, NULL, 0);
	ck_assert_ptr_nonnull(keys);
	ck_assert_uint_eq(keys->n, 2);
	ck_assert_uint_eq(skipped, 0);
	free(r);
	free(e);
	free(doc);
}

static void
teardown(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	jwks_free(keys);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(rsa2);
	EVP_PKEY_free(ec);
	free(rsa_pub_pem);
}

START_TEST(base64url_is_strict)
{
	unsigned char *out;
	size_t n;

	ck_assert_int_eq(jwt_b64url_decode("YQ", 2, &out, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(out[0], 'a');
	free(out);
	ck_assert_int_eq(jwt_b64url_decode("YWJj", 4, &out, &n), 0);
	ck_assert_str_eq((char *)out, "abc");
	free(out);
	ck_assert_int_eq(jwt_b64url_decode("YR", 2, &out, &n), -1);    /* bits left over */
	ck_assert_int_eq(jwt_b64url_decode("YQ==", 4, &out, &n), -1);  /* padding */
	ck_assert_int_eq(jwt_b64url_decode("Y+Q", 3, &out, &n), -1);   /* base64, not -url */
	ck_assert_int_eq(jwt_b64url_decode("YWJjZ", 5, &out, &n), -1); /* 5 digits */
	ck_assert_int_eq(jwt_b64url_decode("YW Jj", 5, &out, &n), -1);
}
END_TEST

START_TEST(valid_tokens_pass)
{
	char id[128];
	char *c = claims(300, -10, ISS, "\"" AUD "\"", "mcp.run other");
	char *t = token("RS256", "rsa1", rsa, c);

	ck_assert_int_eq(verify(t, id), JWT_OK);
	ck_assert_str_eq(id, "alice");
	free(t);
	t = token("ES256", "ec1", ec, c);
	ck_assert_int_eq(verify(t, id), JWT_OK);
	ck_assert_str_eq(id, "alice");
	free(t);
	free(c);
	/* aud as an array; the scope in "scope" rather than "scp". */
	c = xasprintf("{\"sub\":\"bob\",\"iss\":\"" ISS "\",\"aud\":[\"x\",\"" AUD "\"],"
		      "\"exp\":%lld,\"scope\":\"a mcp.run\"}", (long long)now + 60);
	t = token("RS256", "rsa1", rsa, c);
	ck_assert_int_eq(verify(t, id), JWT_OK);
	ck_assert_str_eq(id, "bob");
	free(t);
	free(c);
	/* Within the skew: expired 30 s ago, valid from 30 s on. */
	c = claims(-30, 30, ISS, "\"" AUD "\"", "mcp.run");
	t = token("RS256", "rsa1", rsa, c);
	ck_assert_int_eq(verify(t, id), JWT_OK);
	free(t);
	free(c);
}
END_TEST

/* One case of the attack matrix. */
struct attack {
	const char *what;
	const char *alg;
	const char *kid;
	int key; /* 0 rsa, 1 ec, 2 rsa2 (not in the set) */
	long exp_in, nbf_in;
	const char *iss, *aud, *scp;
	enum jwt_status expect;
};

static const struct attack attacks[] = {
	{"expired", "RS256", "rsa1", 0, -120, -300, ISS, "\"" AUD "\"", "mcp.run", JWT_EXPIRED},
	{"nbf in the future", "RS256", "rsa1", 0, 900, 300, ISS, "\"" AUD "\"", "mcp.run",
	 JWT_NOT_YET_VALID},
	{"wrong iss", "RS256", "rsa1", 0, 300, 0, "https://evil.test", "\"" AUD "\"", "mcp.run",
	 JWT_ISSUER},
	{"iss with a slash more", "RS256", "rsa1", 0, 300, 0, ISS "/", "\"" AUD "\"", "mcp.run",
	 JWT_ISSUER},
	{"aud of another resource", "RS256", "rsa1", 0, 300, 0, ISS, "\"https://other/mcp\"",
	 "mcp.run", JWT_AUDIENCE},
	{"aud missing", "RS256", "rsa1", 0, 300, 0, ISS, "[]", "mcp.run", JWT_AUDIENCE},
	{"missing scope", "RS256", "rsa1", 0, 300, 0, ISS, "\"" AUD "\"", "mcp.read", JWT_SCOPE},
	{"scope as a prefix", "RS256", "rsa1", 0, 300, 0, ISS, "\"" AUD "\"", "mcp.runner",
	 JWT_SCOPE},
	{"alg none", "none", "rsa1", 0, 300, 0, ISS, "\"" AUD "\"", "mcp.run", JWT_ALG},
	{"HS256 with the RSA public key", "HS256", "rsa1", 0, 300, 0, ISS, "\"" AUD "\"",
	 "mcp.run", JWT_ALG},
	{"unknown kid", "RS256", "rsa9", 2, 300, 0, ISS, "\"" AUD "\"", "mcp.run",
	 JWT_UNKNOWN_KID},
	{"signed by another key", "RS256", "rsa1", 2, 300, 0, ISS, "\"" AUD "\"", "mcp.run",
	 JWT_SIGNATURE},
	{"ES256 naming an RSA key", "ES256", "rsa1", 1, 300, 0, ISS, "\"" AUD "\"", "mcp.run",
	 JWT_ALG},
	{"RS256 naming an EC key", "RS256", "ec1", 0, 300, 0, ISS, "\"" AUD "\"", "mcp.run",
	 JWT_ALG},
	{"PS256, not allowed", "PS256", "rsa1", 0, 300, 0, ISS, "\"" AUD "\"", "mcp.run",
	 JWT_ALG},
};

START_TEST(attack_matrix)
{
	const struct attack *a = &attacks[_i];
	EVP_PKEY *k = a->key == 0 ? rsa : a->key == 1 ? ec : rsa2;
	char *c = claims(a->exp_in, a->nbf_in, a->iss, a->aud, a->scp);
	char *t = token(a->alg, a->kid, k, c);

	ck_assert_msg(verify(t, NULL) == a->expect, "%s: got %s", a->what,
		      jwt_status_text(verify(t, NULL)));
	free(t);
	free(c);
}
END_TEST

START_TEST(malformed_tokens)
{
	char *c = claims(300, 0, ISS, "\"" AUD "\"", "mcp.run");
	char *t = token("RS256", "rsa1", rsa, c);
	char *s;

	ck_assert_int_eq(verify(t, NULL), JWT_OK);
	/* A fourth and fifth segment. */
	s = xasprintf("%s.e30", t);
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	s = xasprintf("%s.e30.e30", t);
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	/* Two segments. */
	s = xstrndup(t, (size_t)(strrchr(t, '.') - t));
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	/* Padding, and standard base64's alphabet, in the signature. */
	s = xasprintf("%s==", t);
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	s = xstrdup(t);
	s[strlen(s) - 2] = '+';
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	/* A flipped bit of the signature. */
	s = xstrdup(t);
	char *sig = strrchr(s, '.') + 1;
	sig[10] = sig[10] == 'A' ? 'B' : 'A';
	ck_assert_int_eq(verify(s, NULL), JWT_SIGNATURE);
	free(s);
	/* The same claims re-encoded (a space more): the signature is over the bytes. */
	char *c2 = xasprintf(" %s", c);
	char *t2 = token("RS256", "rsa1", rsa, c2);
	char *spliced = xasprintf("%.*s%s", (int)(strchr(t, '.') - t), t, strchr(t2, '.'));
	char *resigned = xasprintf("%.*s%s", (int)(strrchr(spliced, '.') - spliced), spliced,
				   strrchr(t, '.'));
	ck_assert_int_eq(verify(resigned, NULL), JWT_SIGNATURE);
	free(c2);
	free(t2);
	free(spliced);
	free(resigned);
	/* 1 MB. */
	s = xcalloc(1024 * 1024 + 1, 1);
	memset(s, 'A', 1024 * 1024);
	s[100] = '.';
	s[200] = '.';
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	/* Not JSON inside. */
	s = xasprintf("bm90IGpzb24.%s", strchr(t, '.') + 1);
	ck_assert_int_eq(verify(s, NULL), JWT_MALFORMED);
	free(s);
	free(t);
	free(c);
}
END_TEST

START_TEST(identity_claim_is_checked)
{
	struct jwt_policy p;
	char why[256], id[128];
	char *c = xasprintf("{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%lld,"
			    "\"scp\":\"mcp.run\",\"sub\":\"a b\"}", (long long)now + 60);
	char *t = token("RS256", "rsa1", rsa, c);

	ck_assert_int_eq(verify(t, NULL), JWT_IDENTITY);
	free(t);
	free(c);
	/* oid, as Entra's identity. */
	c = claims(300, 0, ISS, "\"" AUD "\"", "mcp.run");
	t = token("RS256", "rsa1", rsa, c);
	policy(&p);
	p.identity_claim = "oid";
	ck_assert_int_eq(jwt_verify(t, strlen(t), keys, &p, id, sizeof(id), why, sizeof(why)),
			 JWT_OK);
	ck_assert_str_eq(id, "0000-1111");
	p.identity_claim = "email";
	ck_assert_int_eq(jwt_verify(t, strlen(t), keys, &p, id, sizeof(id), why, sizeof(why)),
			 JWT_IDENTITY);
	free(t);
	free(c);
}
END_TEST

START_TEST(jwks_skips_unfit_keys)
{
	size_t skipped;
	EVP_PKEY *small = genkey("small", "-algorithm RSA -pkeyopt rsa_keygen_bits:1024");
	char *r = rsa_jwk(rsa, "a", ""), *dup = rsa_jwk(rsa2, "a", "");
	char *enc = rsa_jwk(rsa2, "enc", ",\"use2\":1");
	char *weak = rsa_jwk(small, "weak", "");
	char *e = ec_jwk(ec, "e");
	/* The EC key with its y coordinate changed: off the curve. */
	char *off = xstrdup(e);
	char *y = strstr(off, "\"y\":\"") + 5;
	y[3] = y[3] == 'A' ? 'B' : 'A';
	memcpy(strstr(off, "\"e\""), "\"f\"", 3);
	char *doc = xasprintf("{\"keys\":[%s,%s,%s,%s,%s,%s,{\"kty\":\"oct\",\"kid\":\"h\","
			      "\"k\":\"c2VjcmV0\"},{\"kty\":\"RSA\",\"kid\":\"u\",\"use\":\"enc\","
			      "\"n\":\"AQAB\",\"e\":\"AQAB\"}]}",
			      r, dup, enc, weak, e, off);
	struct jwks *set = jwks_parse(doc, strlen(doc), &skipped, NULL, 0);

	ck_assert_ptr_nonnull(set);
	ck_assert_ptr_nonnull(jwks_find(set, "a"));
	ck_assert_ptr_nonnull(jwks_find(set, "enc"));
	ck_assert_ptr_nonnull(jwks_find(set, "e"));
	ck_assert_ptr_null(jwks_find(set, "weak"));
	ck_assert_ptr_null(jwks_find(set, "f"));
	ck_assert_ptr_null(jwks_find(set, "h"));
	ck_assert_ptr_null(jwks_find(set, "u"));
	ck_assert_uint_eq(set->n, 3);
	ck_assert_uint_eq(skipped, 5);
	jwks_free(set);
	ck_assert_ptr_null(jwks_parse("{\"keys\":{}}", 11, &skipped, NULL, 0));
	ck_assert_ptr_null(jwks_parse("[]", 2, &skipped, NULL, 0));
	EVP_PKEY_free(small);
	free(r);
	free(dup);
	free(enc);
	free(weak);
	free(e);
	free(off);
	free(doc);
}
END_TEST

/* A fake issuer for jwks_source: a clock, a document, and a switch to fail. */
static double fake_now;
static const char *fake_jwks;
static int fake_fail;
static int fake_gets;
static char fake_last_url[256];

static double
fake_clock(void)
{
	return fake_now;
}

static int
fake_get(const char *url, const char *ca_file, char **body, size_t *len, char *why,
	 size_t why_len)
{
	fake_gets++;
	snprintf(fake_last_url, sizeof(fake_last_url), "%s", url);
	if (fake_fail) {
		snprintf(why, why_len, "connection refused");
		return -1;
	}
	if (strstr(url, "openid-configuration"))
		*body = xstrdup("{\"issuer\":\"" ISS "\",\"jwks_uri\":\"https://issuer.test/k\"}");
	else
		*body = xstrdup(fake_jwks);
	*len = strlen(*body);
	return 0;
}

START_TEST(jwks_cache_refreshes_once_a_minute)
{
	struct jwks_source src;
	char *r1 = rsa_jwk(rsa, "k1", ""), *r2 = rsa_jwk(rsa2, "k2", "");
	char *doc1 = xasprintf("{\"keys\":[%s]}", r1), *doc2 = xasprintf("{\"keys\":[%s]}", r2);

	jwks_source_init(&src, ISS, "", NULL);
	src.get = fake_get;
	src.now = fake_clock;
	fake_now = 1000;
	fake_gets = 0;
	fake_fail = 0;
	fake_jwks = doc1;
	/* First use: discovery, then the set. */
	struct jwks *s = jwks_source_get(&src);
	ck_assert_ptr_nonnull(jwks_find(s, "k1"));
	ck_assert_int_eq(fake_gets, 2);
	ck_assert_str_eq(fake_last_url, "https://issuer.test/k");
	/* The issuer rotates to k2; a token names k2 within the minute: no fetch. */
	fake_jwks = doc2;
	fake_now += 30;
	struct jwks *s2 = jwks_source_refresh(&src, s);
	ck_assert_int_eq(fake_gets, 2);
	ck_assert_ptr_null(jwks_find(s2, "k2"));
	jwks_source_put(&src, s2);
	/* After the minute: one fetch, and the rotation is seen. */
	fake_now += 31;
	s2 = jwks_source_refresh(&src, s);
	ck_assert_int_eq(fake_gets, 3);
	ck_assert_ptr_nonnull(jwks_find(s2, "k2"));
	/* The old set stays usable by whoever holds it. */
	ck_assert_ptr_nonnull(jwks_find(s, "k1"));
	jwks_source_put(&src, s);
	/* A failed fetch keeps the set it had. */
	fake_fail = 1;
	fake_now += 61;
	s = jwks_source_refresh(&src, s2);
	ck_assert_int_eq(fake_gets, 4);
	ck_assert_ptr_nonnull(jwks_find(s, "k2"));
	jwks_source_put(&src, s);
	jwks_source_put(&src, s2);
	/* An old set is fetched again when next used. */
	fake_fail = 0;
	fake_jwks = doc1;
	fake_now += JWKS_MAX_AGE_S;
	s = jwks_source_get(&src);
	ck_assert_int_eq(fake_gets, 5);
	ck_assert_ptr_nonnull(jwks_find(s, "k1"));
	jwks_source_put(&src, s);
	jwks_source_free(&src);
	free(r1);
	free(r2);
	free(doc1);
	free(doc2);
}
END_TEST

START_TEST(discovery_needs_the_same_issuer)
{
	struct jwks_source src;

	jwks_source_init(&src, "https://other.test", "", NULL);
	src.get = fake_get;
	src.now = fake_clock;
	fake_now = 5000;
	fake_fail = 0;
	ck_assert_ptr_null(jwks_source_get(&src));
	jwks_source_free(&src);
}
END_TEST

/* Write a file of `mode` holding `text`; returns its path (caller frees). */
static char *
write_file(const char *name, const char *text, mode_t mode)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

/* Open `path` as the parent does (secret_file.h), so the readers find its copy. */
static void
opened(const char *path)
{
	static const struct secret_deny nobody = {1, 0, NULL};
	char why[512];

	ck_assert_msg(secret_file_open("auth.tokens_file", path, &nobody, why, sizeof(why)) == 0,
		      "%s", why);
}

/* SHA-256 of s in hex. Caller frees. */
static char *
sha256_hex(const char *s)
{
	unsigned char d[32];
	unsigned int n;
	char *out = xcalloc(65, 1);
	EVP_Digest(s, strlen(s), d, &n, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	return out;
}

START_TEST(tokens_file)
{
	char **ids;
	unsigned char(*hashes)[32];
	char why[512], id[128];
	char *ha = sha256_hex("secret-a"), *hb = sha256_hex("secret-b");
	char *text = xasprintf("# agents\n\nagent-a: %s\n  agent-b:%s  \n", ha, hb);
	char *path = write_file("tokens", text, 0600);

	/* Not opened by the parent: no copy to read. */
	ck_assert_int_eq(auth_tokens_read(path, &ids, &hashes, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "not opened by the daemon at start-up"));
	opened(path);
	int n = auth_tokens_read(path, &ids, &hashes, why, sizeof(why));
	ck_assert_msg(n == 2, "%s", why);
	ck_assert_int_eq(auth_tokens_match(ids, hashes, n, "secret-b", 8, id, sizeof(id)), 0);
	ck_assert_str_eq(id, "agent-b");
	ck_assert_int_eq(auth_tokens_match(ids, hashes, n, "secret-a", 8, id, sizeof(id)), 0);
	ck_assert_str_eq(id, "agent-a");
	ck_assert_int_eq(auth_tokens_match(ids, hashes, n, "secret-c", 8, id, sizeof(id)), -1);
	ck_assert_int_eq(auth_tokens_match(ids, hashes, n, "secret-", 7, id, sizeof(id)), -1);
	auth_tokens_free(ids, hashes, n);
	free(path);
	free(text);
	/* A bad line is named by number, its hash never quoted. */
	text = xasprintf("agent-a: %s\nagent b: %s\n", ha, hb);
	path = write_file("tokens2", text, 0600);
	opened(path);
	ck_assert_int_eq(auth_tokens_read(path, &ids, &hashes, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "entry 2"));
	ck_assert_ptr_null(strstr(why, hb));
	free(path);
	free(text);
	text = xasprintf("agent-a: %.63s\n", ha);
	path = write_file("tokens3", text, 0600);
	opened(path);
	ck_assert_int_eq(auth_tokens_read(path, &ids, &hashes, why, sizeof(why)), -1);
	free(path);
	free(text);
	free(ha);
	free(hb);
}
END_TEST

/* auth_check in mode tokens: the header's syntax and the query string. */
START_TEST(authorization_header)
{
	struct config c;
	struct auth_result r;
	char why[512], ch[2048];
	char *ha = sha256_hex("tok-A.b_c~d+e/f=");
	char *text = xasprintf("alice: %s\n", ha);
	char *path = write_file("tokens4", text, 0600);
	opened(path);

	config_defaults(&c);
	free(c.name);
	c.name = xstrdup("py");
	free(c.listen_host);
	c.listen_host = xstrdup("127.0.0.1");
	c.auth_mode = AUTH_TOKENS;
	free(c.auth_tokens_file);
	c.auth_tokens_file = xstrdup(path);
	ck_assert_msg(auth_init(&c, 8123, why, sizeof(why)) == 0, "%s", why);
	ck_assert_str_eq(auth_resource(), "http://127.0.0.1:8123/mcp");

	auth_check("Bearer tok-A.b_c~d+e/f=", NULL, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.identity, "alice");
	auth_check("bearer tok-A.b_c~d+e/f=", "", &r);
	ck_assert_int_eq(r.status, 0);
	auth_check("BEARER   tok-A.b_c~d+e/f=", NULL, &r);
	ck_assert_int_eq(r.status, 0);
	auth_check(NULL, NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_ptr_null(r.error);
	auth_check("Basic YWxpY2U6eA==", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_ptr_null(r.error);
	auth_check("Bearer\ttok-A.b_c~d+e/f=", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	auth_check("Bearer tok-A.b_c~d+e/f= ", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(r.error, "invalid_token");
	auth_check("Bearer tok-A.b_c~d+e/f=x", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	auth_check("Bearertok-A.b_c~d+e/f=", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	auth_check("Bearer ", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	auth_check("Bearer wrong", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(r.error, "invalid_token");
	ck_assert_ptr_null(strstr(r.why, "wrong"));
	/* In the query string: refused even beside a good header. */
	auth_check("Bearer tok-A.b_c~d+e/f=", "x=1&access_token=tok-A", &r);
	ck_assert_int_eq(r.status, 400);
	ck_assert_str_eq(r.error, "invalid_request");
	auth_check("Bearer tok-A.b_c~d+e/f=", "my_access_token=1", &r);
	ck_assert_int_eq(r.status, 0);

	/* No OAuth in mode tokens: a plain challenge, no metadata to follow
	 * (a client that followed it would try to register here). */
	auth_check(NULL, NULL, &r);
	auth_challenge(&r, ch, sizeof(ch));
	ck_assert_str_eq(ch, "Bearer realm=\"codeexecd\"");
	auth_check("Bearer wrong", NULL, &r);
	auth_challenge(&r, ch, sizeof(ch));
	ck_assert_str_eq(ch, "Bearer realm=\"codeexecd\", error=\"invalid_token\"");
	ck_assert_ptr_null(auth_metadata_json());
	auth_shutdown();
	config_free(&c);
	free(path);
	free(text);
	free(ha);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("jwt");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, base64url_is_strict);
	tcase_add_test(tc, valid_tokens_pass);
	tcase_add_loop_test(tc, attack_matrix, 0, (int)(sizeof(attacks) / sizeof(attacks[0])));
	tcase_add_test(tc, malformed_tokens);
	tcase_add_test(tc, identity_claim_is_checked);
	tcase_add_test(tc, jwks_skips_unfit_keys);
	tcase_add_test(tc, jwks_cache_refreshes_once_a_minute);
	tcase_add_test(tc, discovery_needs_the_same_issuer);
	tcase_add_test(tc, tokens_file);
	tcase_add_test(tc, authorization_header);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
