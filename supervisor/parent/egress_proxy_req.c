/*
 * egress_proxy_req.c - the request head of an egress proxy client
 * (egress_proxy_int.h): CONNECT host:port, or an absolute http:// URI
 * whose head is rewritten for the upstream.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "egress_proxy_int.h"
#include "err.h"
#include "xmalloc.h"

/*
 * Headers the proxy drops from a plain request: hop-by-hop ones, every
 * Proxy-* one (meant for a proxy, never for the upstream), and Host, which
 * it writes from the URI so that the upstream serves the host the rules
 * allowed and no other of the same address.
 */
static const char *const dropped[] = {
	"host", "connection", "keep-alive", "te", "upgrade",
};

/* "host:port" or "[v6]:port" (len bytes) into r. 0, or -1. */
static int
split_authority(const char *s, size_t len, int default_port, struct egress_req *r)
{
	const char *colon = NULL;
	size_t hlen = len;

	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (close == NULL)
			return -1;
		hlen = (size_t)(close - s) + 1;
		if (hlen < len && s[hlen] != ':')
			return -1;
		colon = hlen < len ? s + hlen : NULL;
	} else if ((colon = memchr(s, ':', len)) != NULL) {
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= sizeof(r->host) || memchr(s, '@', len) != NULL)
		return -1;
	memcpy(r->host, s, hlen);
	r->host[hlen] = '\0';
	r->port = default_port;
	if (colon != NULL) {
		size_t plen = len - hlen - 1;
		char digits[8];
		if (plen == 0 || plen > 5 || strspn(colon + 1, "0123456789") < plen)
			return -1;
		memcpy(digits, colon + 1, plen);
		digits[plen] = '\0';
		r->port = atoi(digits);
	}
	return r->port >= 1 && r->port <= 65535 ? 0 : -1;
}

static int
is_dropped(const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);

	if (colon == NULL)
		return 0;
	if (strncasecmp(line, "proxy-", 6) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		if ((size_t)(colon - line) == strlen(dropped[i]) &&
		    strncasecmp(line, dropped[i], strlen(dropped[i])) == 0)
			return 1;
	return 0;
}

/* The head for the upstream: origin-form request line, kept headers, our Host. */
static void
rewrite(struct egress_req *r, const char *method, size_t mlen, const char *path, size_t plen,
	const char *version, size_t vlen, const char *headers, const char *end,
	const char *authority, size_t alen)
{
	struct buf b;

	buf_init(&b);
	buf_add(&b, method, mlen);
	buf_adds(&b, " ");
	if (plen == 0 || path[0] != '/')
		buf_adds(&b, "/");
	buf_add(&b, path, plen);
	buf_adds(&b, " ");
	buf_add(&b, version, vlen);
	buf_adds(&b, "\r\nHost: ");
	buf_add(&b, authority, alen);
	buf_adds(&b, "\r\n");
	for (const char *p = headers; p < end;) {
		const char *eol = strstr(p, "\r\n");
		if (!is_dropped(p, (size_t)(eol - p))) {
			buf_add(&b, p, (size_t)(eol - p));
			buf_adds(&b, "\r\n");
		}
		p = eol + 2;
	}
	buf_adds(&b, "Connection: close\r\n\r\n");
	r->fwd_len = b.len;
	r->fwd = b.data;
}

/* Every header line ends in CRLF, with no bare CR or LF inside (no smuggling). */
static int
lines_clean(const char *start, const char *end)
{
	for (const char *p = start; p < end; p++)
		if ((*p == '\r' && p[1] != '\n') || (*p == '\n' && (p == start || p[-1] != '\r')) ||
		    *p == '\0')
			return 0;
	return 1;
}

/* Every header line from p to end is NAME: VALUE, NAME an RFC 9110 token. */
static int
headers_valid(const char *p, const char *end)
{
	static const char token[] = "!#$%&'*+-.^_`|~0123456789"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	while (p < end) {
		const char *eol = strstr(p, "\r\n");
		size_t name = strspn(p, token);
		if (name == 0 || p[name] != ':' || p + name > eol)
			return 0;
		p = eol + 2;
	}
	return 1;
}

int
egress_req_parse(const char *buf, size_t len, struct egress_req *r, char *why, size_t why_len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);

	memset(r, 0, sizeof(*r));
	if (end == NULL)
		return len >= EGRESS_HEAD_MAX ? (err_set(why, why_len, "request head too long"), 431)
					      : 0;
	r->head_len = (size_t)(end - buf) + 4;
	if (r->head_len > EGRESS_HEAD_MAX)
		return err_set(why, why_len, "request head too long"), 431;
	if (!lines_clean(buf, end + 2))
		return err_set(why, why_len, "a bare CR, LF or NUL in the request head"), 400;
	const char *eol = strstr(buf, "\r\n");
	if (!headers_valid(eol + 2, end + 2))
		return err_set(why, why_len, "a header line that is not NAME: VALUE"), 400;
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (sp1 == NULL || sp2 == NULL || sp1 == buf || sp2 == sp1 + 1 ||
	    (size_t)(eol - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    strspn(buf, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != (size_t)(sp1 - buf))
		return err_set(why, why_len, "not an HTTP/1 request line"), 400;
	const char *target = sp1 + 1;
	size_t tlen = (size_t)(sp2 - target);
	if (sp1 - buf == 7 && strncmp(buf, "CONNECT", 7) == 0) {
		r->is_connect = 1;
		if (split_authority(target, tlen, 0, r) == -1)
			return err_set(why, why_len, "CONNECT needs HOST:PORT"), 400;
		return 1;
	}
	if (tlen < 7 || strncasecmp(target, "http://", 7) != 0)
		return err_set(why, why_len, "a plain request needs an absolute http:// URI "
			       "(https goes through CONNECT)"), 400;
	const char *auth = target + 7;
	size_t alen = strcspn(auth, "/? ");
	if (split_authority(auth, alen, 80, r) == -1)
		return err_set(why, why_len, "the URI's host is not HOST[:PORT]"), 400;
	rewrite(r, buf, (size_t)(sp1 - buf), auth + alen, (size_t)(sp2 - auth - alen), sp2 + 1, 8,
		eol + 2, end + 2, auth, alen);
	return 1;
}

/* Whether the header line at p (len bytes) is named one of m's, or is hop-by-hop. */
static int
is_replaced(const char *p, size_t len, const struct egress_inject *const *m, size_t n)
{
	const char *colon = memchr(p, ':', len);
	size_t name = colon ? (size_t)(colon - p) : 0;

	if (is_dropped(p, len))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (name == strlen(m[i]->header) && strncasecmp(p, m[i]->header, name) == 0)
			return 1;
	return 0;
}

int
egress_inject_head(const char *buf, size_t len, const char *authority,
		   const struct egress_inject *const *m, size_t n, char **out, size_t *out_len, size_t *head_len, char *why, size_t why_len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);

	*out = NULL;
	if (end == NULL)
		return len >= EGRESS_HEAD_MAX ? (err_set(why, why_len, "request head too long"), 431)
					      : 0;
	*head_len = (size_t)(end - buf) + 4;
	if (*head_len > EGRESS_HEAD_MAX)
		return err_set(why, why_len, "request head too long"), 431;
	const char *eol = strstr(buf, "\r\n");
	if (!lines_clean(buf, end + 2) || !headers_valid(eol + 2, end + 2) ||
	    memmem(buf, (size_t)(eol - buf), " HTTP/1.", 8) == NULL)
		return err_set(why, why_len, "not an HTTP/1 request head"), 400;
	struct buf b;
	buf_init(&b);
	buf_add(&b, buf, (size_t)(eol - buf) + 2);
	/* The host the headers are for, never another of the same server's. */
	buf_adds(&b, "Host: ");
	buf_adds(&b, authority);
	buf_adds(&b, "\r\n");
	for (const char *p = eol + 2; p < end + 2;) {
		const char *e = strstr(p, "\r\n");
		if (!is_replaced(p, (size_t)(e - p), m, n))
			buf_add(&b, p, (size_t)(e - p) + 2);
		p = e + 2;
	}
	for (size_t i = 0; i < n; i++) {
		buf_adds(&b, m[i]->header);
		buf_adds(&b, ": ");
		buf_adds(&b, m[i]->value);
		buf_adds(&b, "\r\n");
	}
	/* One request per connection: each one gets the headers (see egress_proxy_tls.c). */
	buf_adds(&b, "Connection: close\r\n\r\n");
	*out_len = b.len;
	*out = b.data;
	return 1;
}
