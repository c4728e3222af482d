/*
 * egress_proxy_ca.c - the egress proxy's certificate authority
 * (egress_proxy_int.h): made, or taken again while it has a week left, in
 * DIR before the proxy's filter is loaded; and the leaf certificates it
 * signs for the intercepted hosts, one per name, made on first use.
 *
 * DIR holds ca.key (mode 0600: the proxy's user's only), ca.pem and
 * bundle.pem (the system's CAs and ca.pem, world-readable: kernels trust
 * it through SSL_CERT_FILE). A CA taken again keeps the kernels started
 * before a proxy restart working. Keys are EC P-256.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "egress_proxy_int.h"
#include "err.h"
#include "xmalloc.h"

#define CA_DAYS 30
#define CA_RENEW_S (7 * 86400)
#define LEAVES_MAX 256

static struct {
	EVP_PKEY *ca_key, *leaf_key;
	X509 *ca;
	pthread_mutex_t lock;
	struct {
		char *host;
		X509 *cert;
	} leaves[LEAVES_MAX];
	size_t n_leaves;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Add extension `nid` = `value` to x, issued by `issuer`. 0, or -1. */
static int
ext_add(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	int rc = e != NULL && X509_add_ext(x, e, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(e);
	return rc;
}

/* A certificate for `key` named CN=cn, valid for CA_DAYS, unsigned; NULL on failure. */
static X509 *
cert_new(EVP_PKEY *key, const char *cn)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;

	if (x == NULL || RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f; /* a positive serial */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (bn == NULL || BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL ||
	    X509_set_version(x, 2) != 1 || X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), (long)CA_DAYS * 86400) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
				       (const unsigned char *)cn, -1, -1, 0) != 1)
		goto fail;
	BN_free(bn);
	return x;
fail:
	BN_free(bn);
	X509_free(x);
	return NULL;
}

/* A new self-signed CA in C. 0, or -1. */
static int
ca_make(void)
{
	C.ca_key = EVP_EC_gen("P-256");
	if (C.ca_key == NULL || (C.ca = cert_new(C.ca_key, "codeexecd egress proxy CA")) == NULL)
		return -1;
	if (X509_set_issuer_name(C.ca, X509_get_subject_name(C.ca)) != 1 ||
	    ext_add(C.ca, C.ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") == -1 ||
	    ext_add(C.ca, C.ca, NID_key_usage, "critical,keyCertSign,cRLSign") == -1 ||
	    ext_add(C.ca, C.ca, NID_subject_key_identifier, "hash") == -1 ||
	    X509_sign(C.ca, C.ca_key, EVP_sha256()) == 0)
		return -1;
	return 0;
}

/* The CA of an earlier start, if it has CA_RENEW_S left. 0, or -1. */
static int
ca_load(const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/ca.key", dir);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	C.ca_key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	if ((f = fopen(path, "re")) != NULL) {
		C.ca = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
	}
	time_t soon = time(NULL) + CA_RENEW_S;
	if (C.ca_key != NULL && C.ca != NULL && X509_check_private_key(C.ca, C.ca_key) == 1 &&
	    X509_cmp_time(X509_get0_notAfter(C.ca), &soon) > 0)
		return 0;
	EVP_PKEY_free(C.ca_key);
	X509_free(C.ca);
	C.ca_key = NULL;
	C.ca = NULL;
	return -1;
}

/* Write `path` by a rename, with `mode`; `sys` (a CA bundle) first if not NULL. 0, or -1 with why. */
static int
write_pem(const char *path, mode_t mode, int with_key, const char *sys, char *why, size_t why_len)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	FILE *f = fd == -1 ? NULL : fdopen(fd, "w");
	if (f == NULL)
		return err_set(why, why_len, "%s: %s", tmp, strerror(errno));
	FILE *in = sys ? fopen(sys, "re") : NULL;
	char b[8192];
	size_t n;
	while (in != NULL && (n = fread(b, 1, sizeof(b), in)) > 0)
		fwrite(b, 1, n, f);
	if (in != NULL)
		fclose(in);
	int ok = with_key ? PEM_write_PrivateKey(f, C.ca_key, NULL, NULL, 0, NULL, NULL)
			  : PEM_write_X509(f, C.ca);
	if (fchmod(fileno(f), mode) == -1)
		ok = 0;
	if (fclose(f) != 0 || !ok || rename(tmp, path) == -1) {
		unlink(tmp);
		return err_set(why, why_len, "%s: cannot write it: %s", path, strerror(errno));
	}
	return 0;
}

int
egress_ca_setup(const char *dir, char *why, size_t why_len)
{
	char key[4096], pem[4096], bundle[4096];

	if (mkdir(dir, 0711) == -1 && errno != EEXIST)
		return err_set(why, why_len, "%s: %s", dir, strerror(errno));
	if (chmod(dir, 0711) == -1)
		return err_set(why, why_len, "%s: chmod: %s", dir, strerror(errno));
	snprintf(key, sizeof(key), "%s/ca.key", dir);
	snprintf(pem, sizeof(pem), "%s/ca.pem", dir);
	snprintf(bundle, sizeof(bundle), "%s/bundle.pem", dir);
	int fresh = ca_load(dir) == -1;
	if (fresh && ca_make() == -1)
		return err_set(why, why_len, "cannot make the interception CA (OpenSSL)");
	if ((fresh && (write_pem(key, 0600, 1, NULL, why, why_len) == -1 ||
		       write_pem(pem, 0644, 0, NULL, why, why_len) == -1)) ||
	    write_pem(bundle, 0644, 0, EGRESS_SYSTEM_CA_FILE, why, why_len) == -1)
		return -1;
	if ((C.leaf_key = EVP_EC_gen("P-256")) == NULL)
		return err_set(why, why_len, "cannot make the leaf key (OpenSSL)");
	return 0;
}

/* A leaf certificate for `host` signed by the CA; NULL on failure. */
static X509 *
leaf_make(const char *host)
{
	char san[EGRESS_NAME_MAX + 8], cn[65];

	snprintf(cn, sizeof(cn), "%s", host); /* CN is at most 64; the SAN is what counts */
	snprintf(san, sizeof(san), "DNS:%s", host);
	X509 *x = cert_new(C.leaf_key, cn);
	if (x == NULL || X509_set_issuer_name(x, X509_get_subject_name(C.ca)) != 1 ||
	    ext_add(x, C.ca, NID_basic_constraints, "critical,CA:FALSE") == -1 ||
	    ext_add(x, C.ca, NID_key_usage, "critical,digitalSignature") == -1 ||
	    ext_add(x, C.ca, NID_ext_key_usage, "serverAuth") == -1 ||
	    ext_add(x, C.ca, NID_subject_alt_name, san) == -1 ||
	    ext_add(x, C.ca, NID_authority_key_identifier, "keyid:always") == -1 ||
	    X509_sign(x, C.ca_key, EVP_sha256()) == 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

X509 *
egress_ca_leaf(const char *host)
{
	X509 *x = NULL;

	pthread_mutex_lock(&C.lock);
	for (size_t i = 0; i < C.n_leaves && x == NULL; i++)
		if (strcmp(C.leaves[i].host, host) == 0)
			x = C.leaves[i].cert;
	if (x == NULL && (x = leaf_make(host)) != NULL) {
		/* Full: the oldest goes (a connection using it holds its own reference). */
		if (C.n_leaves == LEAVES_MAX) {
			free(C.leaves[0].host);
			X509_free(C.leaves[0].cert);
			memmove(&C.leaves[0], &C.leaves[1], --C.n_leaves * sizeof(C.leaves[0]));
		}
		C.leaves[C.n_leaves].host = xstrdup(host);
		C.leaves[C.n_leaves++].cert = x;
	}
	if (x != NULL)
		X509_up_ref(x);
	pthread_mutex_unlock(&C.lock);
	return x;
}

EVP_PKEY *
egress_ca_leaf_key(void)
{
	return C.leaf_key;
}
