/* test_b64.c - base64 of both alphabets, and the decoder's strictness. */
#include "autoconf.h"

#include <check.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"

/* RFC 4648 section 10, both ways. */
START_TEST(rfc_vectors)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const std[] = {"",	      "Zg==",	  "Zm8=",	"Zm9v",
					  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	static const char *const url[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		unsigned char *d;
		size_t n;
		char *e = b64_encode(plain[i], strlen(plain[i]), B64_STD);
		ck_assert_str_eq(e, std[i]);
		ck_assert_uint_eq(strlen(e), b64_encoded_len(strlen(plain[i]), B64_STD));
		free(e);
		e = b64_encode(plain[i], strlen(plain[i]), B64_URL);
		ck_assert_str_eq(e, url[i]);
		ck_assert_uint_eq(strlen(e), b64_encoded_len(strlen(plain[i]), B64_URL));
		free(e);
		ck_assert_int_eq(b64_decode(std[i], strlen(std[i]), B64_STD, &d, &n), 0);
		ck_assert_uint_eq(n, strlen(plain[i]));
		ck_assert_str_eq((char *)d, plain[i]);
		free(d);
		ck_assert_int_eq(b64_decode(url[i], strlen(url[i]), B64_URL, &d, &n), 0);
		ck_assert_str_eq((char *)d, plain[i]);
		free(d);
	}
}
END_TEST

/* Every byte value, at every length to 80, as OpenSSL encodes it; and back. */
START_TEST(matches_openssl)
{
	unsigned char in[80], enc[128];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 53 + 7);
	for (size_t n = 0; n <= sizeof(in); n++) {
		EVP_EncodeBlock(enc, in, (int)n);
		char *e = b64_encode(in, n, B64_STD);
		ck_assert_str_eq(e, (char *)enc);
		unsigned char *d;
		size_t dn;
		ck_assert_int_eq(b64_decode(e, strlen(e), B64_STD, &d, &dn), 0);
		ck_assert_uint_eq(dn, n);
		ck_assert(memcmp(d, in, n) == 0);
		free(d);
		free(e);
		e = b64_encode(in, n, B64_URL);
		ck_assert(strpbrk(e, "+/=") == NULL);
		ck_assert_int_eq(b64_decode(e, strlen(e), B64_URL, &d, &dn), 0);
		ck_assert_uint_eq(dn, n);
		ck_assert(memcmp(d, in, n) == 0);
		free(d);
		free(e);
	}
}
END_TEST

static int
bad(const char *s, enum b64_alphabet a)
{
	unsigned char *d = NULL;
	size_t n;
	int rc = b64_decode(s, strlen(s), a, &d, &n);
	free(d);
	return rc == -1;
}

START_TEST(strict)
{
	ck_assert(bad("Zg=", B64_STD));	   /* not a multiple of 4 */
	ck_assert(bad("Zg", B64_STD));	   /* padding missing */
	ck_assert(bad("Zh==", B64_STD));   /* bits left over */
	ck_assert(bad("Z===", B64_STD));   /* three '=' */
	ck_assert(bad("Zg==Zg==", B64_STD)); /* padding inside */
	ck_assert(bad("Z=g=", B64_STD));
	ck_assert(bad("Zm9 v", B64_STD));  /* whitespace */
	ck_assert(bad("Zm9-", B64_STD));   /* the other alphabet */
	ck_assert(bad("Zm9/", B64_URL));
	ck_assert(bad("Zg==", B64_URL));   /* padding */
	ck_assert(bad("YR", B64_URL));	   /* bits left over */
	ck_assert(bad("Z", B64_URL));	   /* one digit is no byte */
	ck_assert(!bad("Zm9/", B64_STD));
	ck_assert(!bad("Zm9_", B64_URL));
	/* A NUL is a character like any other: not a digit. */
	unsigned char *d;
	size_t n;
	ck_assert_int_eq(b64_decode("Zg\0=", 4, B64_STD, &d, &n), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("b64");
	TCase *tc = tcase_create("b64");
	tcase_add_test(tc, rfc_vectors);
	tcase_add_test(tc, matches_openssl);
	tcase_add_test(tc, strict);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
