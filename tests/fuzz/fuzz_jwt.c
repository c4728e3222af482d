/*
 * fuzz_jwt.c - the bearer-token validator (auth_jwt.c) and the JWKS reader
 * (auth_jwks.c) on arbitrary bytes, as a client or a hostile issuer sends
 * them.
 *
 * The first byte picks the parser: 0 a token against a fixed JWKS and
 * policy, 1 a JWKS document, 2 strict base64url. Besides crashes it checks
 * that a valid token names a plain identity, that every key read has a kid
 * and a key, and that base64url has one text per byte string (decoding
 * and encoding again gives the input back).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_jwks.h"
#include "auth_jwt.h"
#include "fuzz.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_jwt: %s failed\n", #cond);                           \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* A JWKS of one RSA and one EC P-256 public key (public values only). */
static const char fixed_jwks[] =
	"{\"keys\": [{\"kty\": \"RSA\", \"kid\": \"rsa1\", \"use\": \"sig\", \"alg\": \"RS256"
	"\", \"n\": \"rGSSVq7JCD9ZiGdCq-p67z_80sjIPiswbs3FCGHM1pK-tBBq_TwTlofH90-MgqxhZmKu8vj"
	"E967sJQ07kJTmqfLeHXXkgyw7aoBBwaLEeH6KqvzMCcOWVzIl6YY3C7o_r_XgdlxYZ3Okm0F3uet675lHwhq"
	"a0N21YgBMLDF5a_3NmFrD7cjGs_2YHsZWO5hegOceu5fPAag1S9oCJLCRUvuBeCA1Nle4eLDLCSQhfLUWFLz"
	"e_ZxDGW0cGxk3sJJDH6ENr4GI-P5as98PssxqYJt7RiWRz5mLIYEWTymCf18P2zBr40H1SDaf4S_B_U06jCI"
	"ap1q_ZQT59Cc8gepJEw\", \"e\": \"AQAB\"}, {\"kty\": \"EC\", \"kid\": \"ec1\", \"use\""
	": \"sig\", \"crv\": \"P-256\", \"x\": \"DxLuH_wVDQOvq-DTHyOA5MY_GoMSLml0lhbD3cGbrpA"
	"\", \"y\": \"c6TRoyPFtGcTdTYbc2J-Po-7K4XsJ4nprjPLMb7E0ag\"}]}";

static char *const audiences[] = {"https://mcp.test/mcp"};
static char *const scopes[] = {"mcp.run"};
static char *const algs[] = {"RS256", "ES256", "PS256"};

static void
fuzz_token(const char *s, size_t len)
{
	static struct jwks *keys;
	size_t skipped;
	char identity[128], why[256];

	if (keys == NULL)
		keys = jwks_parse(fixed_jwks, strlen(fixed_jwks), &skipped, NULL, 0);
	CHECK(keys != NULL && keys->n == 2);
	struct jwt_policy p = {
		.issuer = "https://issuer.test",
		.audiences = audiences,
		.naudiences = 1,
		.scopes = scopes,
		.nscopes = 1,
		.algs = algs,
		.nalgs = 3,
		.skew_s = 60,
		.identity_claim = "sub",
		.now = 1800000000,
	};
	identity[0] = '\0';
	enum jwt_status st =
		jwt_verify(s, len, keys, &p, identity, sizeof(identity), why, sizeof(why));
	CHECK(jwt_status_text(st)[0] != '?');
	if (st == JWT_OK) {
		size_t n = strlen(identity);
		CHECK(n > 0 && n <= JWT_IDENTITY_MAX);
		for (size_t i = 0; i < n; i++)
			CHECK(identity[i] > 0x20 && identity[i] < 0x7f && identity[i] != '"' &&
			      identity[i] != '\\');
	}
}

static void
fuzz_jwks(const char *s, size_t len)
{
	size_t skipped;
	struct jwks *set = jwks_parse(s, len, &skipped, NULL, 0);

	if (set == NULL)
		return;
	CHECK(set->n <= JWKS_MAX_KEYS);
	for (size_t i = 0; i < set->n; i++) {
		CHECK(set->v[i].kid != NULL && set->v[i].kid[0] != '\0');
		CHECK(set->v[i].pkey != NULL);
		CHECK(jwks_find(set, set->v[i].kid) == &set->v[i]);
	}
	jwks_free(set);
}

/* The base64url text of n bytes into out (4 * n / 3 + 4 bytes). */
static void
encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = digits[v >> 18 & 63];
		out[o++] = digits[v >> 12 & 63];
		if (i + 1 < n)
			out[o++] = digits[v >> 6 & 63];
		if (i + 2 < n)
			out[o++] = digits[v & 63];
	}
	out[o] = '\0';
}

static void
fuzz_b64url(const char *s, size_t len)
{
	unsigned char *raw;
	size_t n;

	if (jwt_b64url_decode(s, len, &raw, &n) == -1)
		return;
	char *again = malloc(4 * n / 3 + 4);
	CHECK(again != NULL);
	encode(raw, n, again);
	CHECK(strlen(again) == len && memcmp(again, s, len) == 0);
	free(again);
	free(raw);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	char *s = malloc(size);
	if (s == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0: fuzz_token(s, size - 1); break;
	case 1: fuzz_jwks(s, size - 1); break;
	default: fuzz_b64url(s, size - 1); break;
	}
	free(s);
	return 0;
}
