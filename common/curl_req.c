/* curl_req.c - see curl_req.h. */
#include "autoconf.h"

#include <string.h>

#include "curl_req.h"
#include "err.h"

/* The collector's state: the caller's buffer and its bound. */
struct collect {
	struct buf *b;
	size_t max;
	int too_big;
};

/* libcurl's write callback: a short count (over the bound) stops the transfer. */
static size_t
collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct collect *c = arg;
	size_t n = size * nmemb;

	if (c->b->len + n > c->max) {
		c->too_big = 1;
		return 0;
	}
	buf_add(c->b, data, n);
	return n;
}

int
curl_req_perform(const struct curl_req *r, struct buf *answer, struct curl_res *res,
		 char *why, size_t why_len)
{
	char curlerr[CURL_ERROR_SIZE] = "";
	struct collect col = {.b = answer, .max = r->max_answer};
	CURL *c = curl_easy_init();

	memset(res, 0, sizeof(*res));
	if (c == NULL) {
		res->code = CURLE_FAILED_INIT;
		return err_set(why, why_len, "cannot initialize libcurl");
	}
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, r->protocols);
	if (r->redir_protocols != NULL) {
		curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, r->redir_protocols);
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(c, CURLOPT_MAXREDIRS, r->max_redirs);
	} else {
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L); /* credentials go nowhere else */
	}
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (r->ca_file != NULL && r->ca_file[0] != '\0')
		curl_easy_setopt(c, CURLOPT_CAINFO, r->ca_file);
	if (r->connect_timeout_s > 0)
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, r->connect_timeout_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, r->timeout_s);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_answer);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, r->fail_on_error ? 1L : 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (r->no_proxy)
		curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "codeexecd/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
	if (r->headers != NULL)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
	if (r->method != NULL)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	}
	if (r->write != NULL) {
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, r->write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, r->write_arg);
	} else {
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &col);
	}
	res->code = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->status);
	curl_easy_cleanup(c);
	if (r->write == NULL)
		buf_add(answer, "", 0); /* NUL-terminated, even when empty */
	res->too_big = col.too_big || res->code == CURLE_FILESIZE_EXCEEDED;
	if (res->code == CURLE_OK)
		return 0;
	if (res->too_big)
		return err_set(why, why_len, "answer over %zu bytes, refused", r->max_answer);
	return err_set(why, why_len, "%s", curlerr[0] ? curlerr : curl_easy_strerror(res->code));
}
