/*
 * publish_azure.c - the Azure Blob Storage publisher (seed 000's
 * BlobPublisher) over libcurl. A file up to AZ_BLOCK bytes goes in one Put
 * Blob; a larger one in blocks of AZ_BLOCK (Put Block), then Put Block
 * List. Every request carries x-ms-version and a Content-MD5 of its body,
 * which the service checks; Put Block List also sets the blob's own MD5
 * (x-ms-blob-content-md5) and content type. A request that meets a 5xx,
 * throttling (429) or a transport error is tried again, AZ_TRIES times in
 * all, after a growing pause. Credentials: SharedKey (account_key_file),
 * a SAS token (sas_token_file), or a managed identity's token from the
 * instance metadata endpoint; files are read at each publish, so a
 * rotated key needs no restart.
 */
#include "autoconf.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
#include "buf.h"
#include "curl_req.h"
#include "err.h"
#include "hex.h"
#include "json_member.h"
#include "secret_file.h"
#include "publish.h"
#include "uri.h"
#include "xmalloc.h"

#define AZ_VERSION "2021-08-06"
#define AZ_BLOCK (4u * 1024 * 1024)
#define AZ_TRIES 5
#define AZ_PAUSE_MS 250		/* before the second try; doubled for each next */
#define AZ_TIMEOUT_S 300	/* one request */
#define AZ_CONNECT_S 30
#define AZ_ANSWER_MAX 65536
/* Managed identity: Azure's instance metadata endpoint, for Blob Storage. */
#define IMDS_BASE "http://169.254.169.254"
#define IMDS_PATH "/metadata/identity/oauth2/token" \
		  "?api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F"

static const char *imds_base = IMDS_BASE;

void
publish_azure_imds_base(const char *base)
{
	imds_base = base ? base : IMDS_BASE;
}

/* One upload's connection to the service. */
struct az {
	const struct config_publisher *p;
	char account[128];
	char *url;	   /* the blob's URL, without a query */
	char *url_path;	   /* its path, "/container/name" (after the account's, if path-style) */
	unsigned char key[128];
	int keylen;	   /* SharedKey: the decoded account key; 0: none */
	char *sas;	   /* SAS token, without '?'; NULL: none */
	char *bearer;	   /* managed identity's token; NULL: none */
};

/* The text of <tag> in an XML error answer, into out[len]; "" when absent. */
static void
xml_text(const char *body, const char *tag, char *out, size_t len)
{
	char open[32], close_[32];

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close_, sizeof(close_), "</%s>", tag);
	const char *a = strstr(body, open), *b;
	out[0] = '\0';
	if (a == NULL || (b = strstr(a += strlen(open), close_)) == NULL)
		return;
	size_t n = (size_t)(b - a) < len - 1 ? (size_t)(b - a) : len - 1;
	memcpy(out, a, n);
	out[n] = '\0';
	for (char *s = out; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

/* base64 of the MD5 of data[n] (caller frees). */
static char *
md5_b64(const void *data, size_t n)
{
	unsigned char md[16];
	EVP_Digest(data, n, md, NULL, EVP_md5(), NULL);
	return b64_encode(md, sizeof(md), B64_STD);
}

/* Whether `host` names an address or localhost: then the account is the path's first part. */
static int
path_style(const char *host, size_t len)
{
	if (len == 9 && strncmp(host, "localhost", 9) == 0)
		return 1;
	return host[0] == '[' || strspn(host, "0123456789.") == len;
}

/* The account name and the blob's URL and path for `name`. 0, or -1 with why. */
static int
az_locate(struct az *a, const char *name, char *why, size_t why_len)
{
	const char *u = a->p->account_url;
	const char *host = strstr(u, "://") + 3;
	size_t hlen = strcspn(host, ":/");
	const char *path = host + strcspn(host, "/");
	struct buf url, upath;

	if (path_style(host, hlen)) {
		size_t n = strcspn(path + (*path == '/'), "/");
		if (n == 0 || n >= sizeof(a->account))
			return err_set(why, why_len, "account_url %s: no account name in its path",
				       u);
		memcpy(a->account, path + 1, n);
		a->account[n] = '\0';
	} else {
		size_t n = strcspn(host, ".:/");
		if (n >= sizeof(a->account))
			n = sizeof(a->account) - 1;
		memcpy(a->account, host, n);
		a->account[n] = '\0';
	}
	buf_init(&upath);
	buf_add(&upath, path, strlen(path));
	while (upath.len > 0 && upath.data[upath.len - 1] == '/')
		upath.len--;
	buf_adds(&upath, "/");
	buf_adds(&upath, a->p->container);
	/* Each part of the name escaped; the signature covers the same text. */
	uri_add_path(&upath, name);
	a->url_path = buf_release(&upath);
	buf_init(&url);
	buf_add(&url, u, (size_t)(path - u));
	buf_adds(&url, a->url_path);
	a->url = buf_release(&url);
	return 0;
}

/* A managed identity's token from the instance metadata endpoint. */
static char *
imds_token(char *why, size_t why_len)
{
	struct curl_slist *h = curl_slist_append(NULL, "Metadata: true");
	char err[ERR_LEN];
	struct curl_res res;
	struct buf ans;
	char *tok = NULL;

	buf_init(&ans);
	char *url = xasprintf("%s%s", imds_base, IMDS_PATH);
	/* The endpoint is plain http on a link-local address, never behind a proxy. */
	struct curl_req req = {
		.url = url,
		.protocols = "http,https",
		.timeout_s = 10,
		.no_proxy = 1,
		.headers = h,
		.max_answer = AZ_ANSWER_MAX,
	};
	int cc = curl_req_perform(&req, &ans, &res, err, sizeof(err));
	struct json_object *o = cc == 0 && res.status == 200 ? json_tokener_parse(ans.data) : NULL;
	const char *t = o ? json_member_str(o, "access_token") : "";
	if (t[0] != '\0')
		tok = xstrdup(t);
	else
		err_set(why, why_len, "managed identity: no token from the instance metadata "
				      "endpoint (%s, HTTP %ld)",
			cc == -1 ? err : "answered", res.status);
	json_object_put(o);
	buf_free(&ans);
	free(url);
	curl_slist_free_all(h);
	return tok;
}

/* Load the publisher's one credential into a. 0, or -1 with why. */
static int
az_credential(struct az *a, char *why, size_t why_len)
{
	const struct config_publisher *p = a->p;

	if (p->sas_token_file[0]) {
		char *s = secret_file_line("sas_token_file", p->sas_token_file, why, why_len);
		if (s == NULL)
			return -1;
		a->sas = xstrdup(s + (s[0] == '?'));
		free(s);
		return 0;
	}
	if (p->account_key_file[0]) {
		char *k = secret_file_line("account_key_file", p->account_key_file, why, why_len);
		if (k == NULL)
			return -1;
		size_t n = strlen(k);
		unsigned char raw[sizeof(a->key) + 3];
		int len = n % 4 == 0 && n / 4 * 3 <= sizeof(raw)
				  ? EVP_DecodeBlock(raw, (const unsigned char *)k, (int)n)
				  : -1;
		if (len > 0)
			len -= (n > 0 && k[n - 1] == '=') + (n > 1 && k[n - 2] == '=');
		free(k);
		if (len <= 0 || len > (int)sizeof(a->key))
			return err_set(why, why_len, "%s does not hold a base64 account key",
				       p->account_key_file);
		memcpy(a->key, raw, (size_t)len);
		a->keylen = len;
		return 0;
	}
	return (a->bearer = imds_token(why, why_len)) ? 0 : -1;
}

static void
az_free(struct az *a)
{
	free(a->url);
	free(a->url_path);
	free(a->sas);
	free(a->bearer);
	OPENSSL_cleanse(a->key, sizeof(a->key));
}

static int
publish_azure_check(const struct config_publisher *p, char *why, size_t why_len)
{
	struct az a = {.p = p};

	if (p->managed_identity) /* its token comes from the network, at the first upload */
		return 0;
	int rc = az_credential(&a, why, why_len);
	az_free(&a);
	return rc;
}

static int
by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* One request's parts. */
struct az_req {
	const char *query;	 /* "comp=block&blockid=..." (URL-escaped), or "" */
	const char *canon_query; /* its canonical lines, "\nblockid:...\ncomp:block", or "" */
	const void *body;
	size_t len;
	const char *content_type; /* NULL: none */
	char *xms[6];		  /* "x-ms-name:value" headers besides date and version */
};

/* The SharedKey Authorization header of request r with headers xms[n] (sorted). */
static char *
shared_key(const struct az *a, const struct az_req *r, const char *md5, char **xms, size_t n)
{
	struct buf s;
	char len[32] = "";
	unsigned char mac[32];
	unsigned int maclen = 0;

	if (r->len > 0)
		snprintf(len, sizeof(len), "%zu", r->len);
	buf_init(&s);
	buf_adds(&s, "PUT\n\n\n");
	buf_adds(&s, len);
	buf_adds(&s, "\n");
	buf_adds(&s, md5);
	buf_adds(&s, "\n");
	buf_adds(&s, r->content_type ? r->content_type : "");
	buf_adds(&s, "\n\n\n\n\n\n\n");
	for (size_t i = 0; i < n; i++) {
		buf_adds(&s, xms[i]);
		buf_adds(&s, "\n");
	}
	buf_adds(&s, "/");
	buf_adds(&s, a->account);
	buf_adds(&s, a->url_path);
	buf_adds(&s, r->canon_query);
	HMAC(EVP_sha256(), a->key, a->keylen, (unsigned char *)s.data, s.len, mac, &maclen);
	buf_free(&s);
	char *sig = b64_encode(mac, maclen, B64_STD);
	char *h = xasprintf("Authorization: SharedKey %s:%s", a->account, sig);
	free(sig);
	return h;
}

/* Send request r once. HTTP status, or 0 on a transport error (why set). */
static long
az_send(const struct az *a, const struct az_req *r, struct buf *ans, char *why, size_t why_len)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	char *xms[10];
	size_t n = 0;
	long status = 0;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "x-ms-date:%a, %d %b %Y %H:%M:%S GMT", &tm);
	xms[n++] = xstrdup(date);
	xms[n++] = xstrdup("x-ms-version:" AZ_VERSION);
	for (size_t i = 0; i < 6 && r->xms[i]; i++)
		xms[n++] = xstrdup(r->xms[i]);
	qsort(xms, n, sizeof(xms[0]), by_name);
	char *md5 = md5_b64(r->body, r->len);
	struct curl_slist *h = NULL;
	for (size_t i = 0; i < n; i++)
		h = curl_slist_append(h, xms[i]);
	char *line = xasprintf("Content-MD5: %s", md5);
	h = curl_slist_append(h, line);
	free(line);
	line = r->content_type ? xasprintf("Content-Type: %s", r->content_type)
			       : xstrdup("Content-Type:");
	h = curl_slist_append(h, line);
	free(line);
	h = curl_slist_append(h, "Expect:");
	if (a->keylen > 0)
		line = shared_key(a, r, md5, xms, n);
	else if (a->bearer)
		line = xasprintf("Authorization: Bearer %s", a->bearer);
	else
		line = NULL;
	if (line)
		h = curl_slist_append(h, line);
	free(line);
	char *url = xasprintf("%s%s%s%s%s", a->url, a->sas || r->query[0] ? "?" : "",
			      a->sas ? a->sas : "", a->sas && r->query[0] ? "&" : "", r->query);

	struct curl_req req = {
		.url = url,
		.protocols = "https,http", /* http: loopback only (config.c) */
		.connect_timeout_s = AZ_CONNECT_S,
		.timeout_s = AZ_TIMEOUT_S,
		.no_proxy = 1,
		.headers = h,
		.method = "PUT",
		.body = r->body ? r->body : "",
		.body_len = r->len,
		.max_answer = AZ_ANSWER_MAX,
	};
	struct curl_res res;
	if (curl_req_perform(&req, ans, &res, why, why_len) == 0)
		status = res.status;
	curl_slist_free_all(h);
	for (size_t i = 0; i < n; i++)
		free(xms[i]);
	free(md5);
	free(url);
	return status;
}

/* Send r until it succeeds (201) or fails for good. 0, or -1 with why. */
static int
az_request(const struct az *a, const struct az_req *r, const char *what, char *why,
	   size_t why_len)
{
	char err[ERR_LEN] = "", code[128], msg[512];
	struct buf ans;
	long status = 0;

	buf_init(&ans);
	for (int i = 0; i < AZ_TRIES; i++) {
		if (i > 0)
			usleep((useconds_t)(AZ_PAUSE_MS << (i - 1)) * 1000);
		ans.len = 0;
		status = az_send(a, r, &ans, err, sizeof(err));
		if (status == 201)
			break;
		/* Only a transport error, the service's 5xx and throttling are worth a retry. */
		if (status != 0 && status < 500 && status != 429)
			break;
	}
	buf_add(&ans, "", 1);
	if (status == 201) {
		buf_free(&ans);
		return 0;
	}
	if (status == 0) {
		err_set(why, why_len, "%s %s: %s", what, a->url, err);
	} else {
		xml_text(ans.data, "Code", code, sizeof(code));
		xml_text(ans.data, "Message", msg, sizeof(msg));
		err_set(why, why_len, "%s %s: HTTP %ld%s%s%s%s", what, a->url, status,
			code[0] ? " " : "", code, msg[0] ? ": " : "", msg);
	}
	buf_free(&ans);
	return -1;
}

/* Read up to n bytes of fd at off into b. Bytes read, or -1 with why. */
static ssize_t
read_at(int fd, char *b, size_t n, off_t off, char *why, size_t why_len)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, b + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err_set(why, why_len, "read: %s", strerror(errno));
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Put Block for each AZ_BLOCK of the file, then Put Block List. */
static int
put_blocks(const struct az *a, const struct publish_src *src, uint64_t size,
	   EVP_MD_CTX *sha, char *why, size_t why_len)
{
	char *chunk = xmalloc(AZ_BLOCK);
	EVP_MD_CTX *md5 = EVP_MD_CTX_new();
	struct buf list;
	unsigned n = 0;
	int rc = 0;

	EVP_DigestInit_ex(md5, EVP_md5(), NULL);
	buf_init(&list);
	buf_adds(&list, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
	for (uint64_t off = 0; off < size && rc == 0; n++) {
		ssize_t got = read_at(src->fd, chunk, AZ_BLOCK, (off_t)off, why, why_len);
		if (got <= 0) {
			rc = got < 0 ? -1 : err_set(why, why_len, "%s shrank while it was sent",
						    src->name);
			break;
		}
		if ((uint64_t)got > size - off)
			got = (ssize_t)(size - off);
		EVP_DigestUpdate(sha, chunk, (size_t)got);
		EVP_DigestUpdate(md5, chunk, (size_t)got);
		char idraw[32];
		snprintf(idraw, sizeof(idraw), "codeexecd-%08u", n);
		char *id = b64_encode(idraw, strlen(idraw), B64_STD);
		char *eid = curl_easy_escape(NULL, id, 0);
		char *q = xasprintf("comp=block&blockid=%s", eid);
		char *cq = xasprintf("\nblockid:%s\ncomp:block", id);
		struct az_req r = {q, cq, chunk, (size_t)got, NULL, {NULL}};
		rc = az_request(a, &r, "Put Block", why, why_len);
		buf_adds(&list, "<Latest>");
		buf_adds(&list, id);
		buf_adds(&list, "</Latest>");
		curl_free(eid);
		free(id);
		free(q);
		free(cq);
		off += (uint64_t)got;
	}
	buf_adds(&list, "</BlockList>");
	unsigned char whole[16];
	EVP_DigestFinal_ex(md5, whole, NULL);
	EVP_MD_CTX_free(md5);
	if (rc == 0) {
		char *m = b64_encode(whole, sizeof(whole), B64_STD);
		char *h1 = xasprintf("x-ms-blob-content-md5:%s", m);
		char *h2 = xasprintf("x-ms-blob-content-type:%s", src->mime_type);
		struct az_req r = {"comp=blocklist", "\ncomp:blocklist", list.data, list.len,
				   "application/xml", {h1, h2, NULL}};
		rc = az_request(a, &r, "Put Block List", why, why_len);
		free(m);
		free(h1);
		free(h2);
	}
	buf_free(&list);
	free(chunk);
	return rc;
}

/* One Put Blob of the whole (small) file. */
static int
put_blob(const struct az *a, const struct publish_src *src, uint64_t size, EVP_MD_CTX *sha,
	 char *why, size_t why_len)
{
	char *body = xmalloc(size ? size : 1);
	ssize_t got = read_at(src->fd, body, size, 0, why, why_len);
	int rc = -1;

	if (got >= 0) {
		EVP_DigestUpdate(sha, body, (size_t)got);
		struct az_req r = {"", "", body, (size_t)got, src->mime_type,
				   {"x-ms-blob-type:BlockBlob", NULL}};
		rc = az_request(a, &r, "Put Blob", why, why_len);
	}
	free(body);
	return rc;
}

static int
publish_azure(const struct config_publisher *p, const struct publish_src *src,
	      struct publish_out *out, char *why, size_t why_len)
{
	struct az a = {.p = p};
	char err[ERR_LEN];
	uint64_t size;
	unsigned char md[32];

	if (publish_check(p, src, &size, why, why_len) == -1)
		return -1;
	char *name = publish_path(p, src);
	int rc = az_locate(&a, name, err, sizeof(err));
	if (rc == 0)
		rc = az_credential(&a, err, sizeof(err));
	EVP_MD_CTX *sha = EVP_MD_CTX_new();
	EVP_DigestInit_ex(sha, EVP_sha256(), NULL);
	if (rc == 0)
		rc = size <= AZ_BLOCK ? put_blob(&a, src, size, sha, err, sizeof(err))
				      : put_blocks(&a, src, size, sha, err, sizeof(err));
	EVP_DigestFinal_ex(sha, md, NULL);
	EVP_MD_CTX_free(sha);
	if (rc == 0) {
		out->size = size;
		hex_encode(out->sha256, md, 32);
		out->uri = xstrdup(a.url);
	} else {
		err_set(why, why_len, "publisher %s: %s", p->name, err);
	}
	az_free(&a);
	free(name);
	return rc;
}

const struct publish_backend publish_backend_azure = {
	.type = "azure_blob",
	.check = publish_azure_check,
	.publish = publish_azure,
};
