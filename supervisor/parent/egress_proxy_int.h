/*
 * egress_proxy_int.h - what the egress proxy's files share (egress_proxy.h):
 * the request head's reader (egress_proxy_req.c), the hosts file
 * (egress_proxy_hosts.c), resolving and connecting (egress_proxy_dial.c),
 * the counts by rule (egress_proxy_stats.c) and its seccomp filter
 * (egress_proxy_filter.c).
 */
#ifndef SUPERVISOR_EGRESS_PROXY_INT_H
#define SUPERVISOR_EGRESS_PROXY_INT_H

#include <stddef.h>

#include "egress_rules.h"

/* The longest request head taken; a longer one gets 431. */
#define EGRESS_HEAD_MAX 8192
/* The most addresses of one name tried. */
#define EGRESS_ADDRS_MAX 16

/* A client's request, as read from its head. */
struct egress_req {
	int is_connect;			  /* CONNECT host:port; else plain HTTP */
	char host[EGRESS_NAME_MAX + 3];	  /* as the client wrote it, brackets kept */
	int port;
	char *fwd;			  /* plain HTTP: the head to send upstream; caller frees */
	size_t fwd_len;
	size_t head_len;		  /* bytes of the client's head, up to its blank line */
};

/*
 * Read the request head at buf[len], with a NUL at buf[len] (the bytes
 * may hold others). 1 with *r filled, 0 when the head is
 * not complete yet, or an HTTP status (400, 405, 431) with why[why_len]
 * saying what is wrong.
 */
int egress_req_parse(const char *buf, size_t len, struct egress_req *r, char *why,
		     size_t why_len);

/* An address a name resolves to: 16 bytes, IPv4 as ::ffff:a.b.c.d. */
struct egress_addr {
	unsigned char a[16];
};

/* Load the hosts file `path` (/etc/hosts format). 0, or -1 with why. */
int egress_hosts_load(const char *path, char *why, size_t why_len);
/* The addresses the hosts file gives `name` (normalised), up to max; their count. */
size_t egress_hosts_lookup(const char *name, struct egress_addr *out, size_t max);

/*
 * Resolve `host` (normalised by egress_host_normalise) and connect to
 * `port` at the first of its addresses the rules let through. The
 * connected descriptor (non-blocking), or -1 with *v the verdict that
 * refused (v->allowed 0) or why[why_len] saying why no connection was
 * made (v->allowed 1).
 */
int egress_dial(const struct egress_rules *rules, const char *host, int port,
		struct egress_verdict *v, char *why, size_t why_len);

/* Count a connection `rule` decided (audit lines: main loop only). */
void egress_stats_count(const char *rule, int allowed);
/*
 * Write DIR/stats if a count changed and a second has passed since the
 * last write: -1 (nothing due), or the milliseconds until a write is due,
 * for the loop's poll.
 */
int egress_stats_flush(const char *dir);

/* The system's CA bundle: trusted for upstreams, and the head of the kernels' bundle. */
#define EGRESS_SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"

/* One egress.inject header (egress_proxy_inject.c). */
struct egress_inject {
	struct egress_rules host; /* one allow rule: the record's host */
	char *header;
	char *value;
};
/* The most headers one host gets. */
#define EGRESS_INJECT_MAX 16

/* Add "HOST HEADER VALUE" (the parent's "inject" line). 0, or -1 with why. */
int egress_inject_add(const char *line, char *why, size_t why_len);
/* Whether any header is injected at all. */
int egress_inject_any(void);
/* The injects of `host` (normalised) port `port`, up to max; their count. */
size_t egress_inject_match(const char *host, int port, const struct egress_inject **out,
			   size_t max);
/*
 * Rewrite an intercepted request's head at buf[len] (NUL at buf[len]):
 * Host set to `authority`, the client's hop-by-hop, Proxy-* and m's names
 * dropped, m's added, and Connection: close. 1
 * with *out (caller frees) and *head_len the client's head, 0 when not
 * complete yet, or 400/431 with why.
 */
int egress_inject_head(const char *buf, size_t len, const char *authority,
		       const struct egress_inject *const *m,
		       size_t n, char **out, size_t *out_len, size_t *head_len, char *why,
		       size_t why_len);

/* Make or take again the CA in `dir` (egress_proxy_ca.c). 0, or -1 with why. */
int egress_ca_setup(const char *dir, char *why, size_t why_len);
struct x509_st;
struct evp_pkey_st;
/* The leaf certificate of `host`, a reference the caller frees; NULL on failure. */
struct x509_st *egress_ca_leaf(const char *host);
/* The key of every leaf (borrowed). */
struct evp_pkey_st *egress_ca_leaf_key(void);

/* One intercepted connection, run by a thread of its own (egress_proxy_tls.c). */
struct egress_intercept {
	int c, u;			/* blocking while the thread runs; the loop closes them */
	char host[EGRESS_NAME_MAX + 3];	/* normalised */
	int port;
	const struct egress_inject *m[EGRESS_INJECT_MAX];
	size_t n;
	unsigned long long budget;	/* bytes it may move; 0: no limit */
	unsigned long long out, in;	/* moved: client to upstream, and back */
	int refused;			/* a 502, 400 or the byte limit */
	const char *rule;		/* the limit's name, or NULL */
	char why[256];			/* how it ended, if not cleanly */
	int notify;			/* the loop's pipe: `slot` is written to it at the end */
	int slot;
};
/* Set up the TLS contexts, with `upstream_ca` ("" none) trusted too. 0, or -1 with why. */
int egress_tls_init(const char *upstream_ca, char *why, size_t why_len);
/* Start x's thread. 0, or -1 with why. */
int egress_tls_start(struct egress_intercept *x, char *why, size_t why_len);

/* Load the proxy's seccomp allow-list (egress_proxy_filter.c). 0, or -1 with why. */
int egress_proxy_filter_install(char *why, size_t why_len);

#endif
