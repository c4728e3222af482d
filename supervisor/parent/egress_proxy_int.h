/*
 * egress_proxy_int.h - what the egress proxy's files share (egress_proxy.h):
 * the request head's reader (egress_proxy_req.c), the hosts file
 * (egress_proxy_hosts.c), resolving and connecting (egress_proxy_dial.c) and
 * its seccomp filter (egress_proxy_filter.c).
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

/* Load the proxy's seccomp allow-list (egress_proxy_filter.c). 0, or -1 with why. */
int egress_proxy_filter_install(char *why, size_t why_len);

#endif
