/*
 * curl_req.h - the one libcurl request of the daemon: TLS verified, no
 * signals, codeexecd's User-Agent, the protocols the caller names, and an
 * answer collected up to a bound. An answer over the bound is refused (the
 * transfer stops, and the error names the limit), never cut short
 * silently. Used by the parent (assets) and the front (JWKS, Azure AI
 * Search, Azure Blob Storage).
 */
#ifndef COMMON_CURL_REQ_H
#define COMMON_CURL_REQ_H

#include <stddef.h>

#include <curl/curl.h>

#include "buf.h"

/* What to send, and how. All borrowed; zero fields take the defaults named. */
struct curl_req {
	const char *url;
	const char *protocols;	     /* CURLOPT_PROTOCOLS_STR: "https", "https,http", ... */
	const char *redir_protocols; /* redirects followed to these; NULL: none followed */
	long max_redirs;	     /* with redir_protocols */
	long connect_timeout_s;	     /* 0: libcurl's (300 s, within timeout_s) */
	long timeout_s;		     /* the whole request; 0: none */
	const char *ca_file;	     /* CA bundle; NULL or "": the system's */
	int no_proxy;		     /* never through a proxy (loopback, credentials) */
	int fail_on_error;	     /* an HTTP status >= 400 is a transfer error */
	struct curl_slist *headers;  /* request headers, or NULL */
	const char *method;	     /* "PUT", ...; NULL: GET, or POST with a body */
	const char *body;	     /* request body, or NULL */
	size_t body_len;
	size_t max_answer;	     /* the bound of the answer, in bytes (> 0) */
	/*
	 * Where the answer goes instead of the caller's buffer (a file, a
	 * hash): libcurl's write callback and its argument, or NULL. It
	 * stops the transfer by returning a short count; max_answer still
	 * bounds the declared size.
	 */
	size_t (*write)(char *data, size_t size, size_t nmemb, void *arg);
	void *write_arg;
};

/* What came back. */
struct curl_res {
	CURLcode code; /* CURLE_OK, or why the transfer failed */
	long status;   /* the HTTP status, 0 if none was read */
	int too_big;   /* the answer was over max_answer and refused */
};

/*
 * Perform r, the answer into `answer` (appended; NUL-terminated past its
 * length) unless r->write is set. 0 when the transfer completed (whatever
 * the status), or -1 with why[why_len] set: libcurl's message, or "answer
 * over N bytes" for a refused answer. *res is filled either way.
 */
int curl_req_perform(const struct curl_req *r, struct buf *answer, struct curl_res *res,
		     char *why, size_t why_len);

#endif
