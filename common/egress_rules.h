/*
 * egress_rules.h - the rules of `egress.allow` and `egress.deny` (issue 36):
 * which hosts a kernel's proxied request may reach, and which addresses a
 * name may resolve to.
 *
 * A rule is one of
 *   NAME[:PORT]        a host name, matched exactly (case folded, one
 *                      trailing dot dropped)
 *   *.SUFFIX[:PORT]    any name ending in ".SUFFIX" (not SUFFIX itself)
 *   ADDR[/LEN]         an IPv4 or IPv6 CIDR (a bare address is /32 or
 *                      /128); it matches IP literals and resolved addresses
 * and no PORT means any port. Deny wins over allow. A name is allowed only
 * by a name rule and an IP literal only by an allow CIDR, so that allowing
 * "example.com" never lets a kernel name an address itself. Every address
 * the proxy connects to is checked again (egress_check_addr): against the
 * deny CIDRs, and against the built-in denied ranges (this host, loopback,
 * link-local, the cloud metadata addresses), which only an allow CIDR that
 * holds the address lifts. An IPv4-mapped IPv6 address is its IPv4 address.
 *
 * Each verdict names the rule that decided it, as written (for the 403
 * body, the audit log and /metrics).
 */
#ifndef COMMON_EGRESS_RULES_H
#define COMMON_EGRESS_RULES_H

#include <stddef.h>

/* The longest rule or host name taken (a DNS name is at most 253). */
#define EGRESS_NAME_MAX 253

enum egress_rule_kind {
	EGRESS_RULE_NAME,
	EGRESS_RULE_SUFFIX,
	EGRESS_RULE_CIDR,
};

struct egress_rule {
	char *text;		 /* normalised, as verdicts name it: "allow *.example.com:443" */
	enum egress_rule_kind kind;
	char *name;		 /* NAME, or ".SUFFIX" */
	int port;		 /* 0: any */
	unsigned char addr[16];	 /* CIDR; IPv4 as ::ffff:a.b.c.d */
	int prefix;		 /* CIDR length over the 128 bits */
};

struct egress_rules {
	struct egress_rule *allow;
	size_t n_allow;
	struct egress_rule *deny;
	size_t n_deny;
};

struct egress_verdict {
	int allowed;
	const char *rule; /* borrowed from the rules, or a static string */
};

/*
 * Add rule `text` (borrowed) to the deny list when `deny`, else to allow.
 * 0, or -1 with why[why_len] naming the rule and what is wrong with it.
 */
int egress_rules_add(struct egress_rules *r, int deny, const char *text, char *why,
		     size_t why_len);
/* Release what *r owns; *r is then empty. */
void egress_rules_free(struct egress_rules *r);

/*
 * May a kernel ask for `host` (a name or an IP literal, an IPv6 one with
 * or without brackets) at `port`? A malformed host is refused.
 */
void egress_check_host(const struct egress_rules *r, const char *host, int port,
		       struct egress_verdict *v);
/*
 * May the proxy connect to `addr` (4 bytes when `len` is 4, else 16) that
 * an allowed name resolved to? The DNS rebinding check. When no rule
 * spoke, v->allowed is 1 and v->rule NULL: the name's rule decided.
 */
void egress_check_addr(const struct egress_rules *r, const unsigned char *addr, size_t len,
		       struct egress_verdict *v);
/*
 * `host` normalised into out[EGRESS_NAME_MAX + 1]: lower case, one
 * trailing dot dropped, brackets of an IPv6 literal removed. 0, or -1
 * when it is empty, too long, or holds a byte no host name has.
 */
int egress_host_normalise(const char *host, char *out);

/* The IP literal `text` as 16 bytes (IPv4 as ::ffff:a.b.c.d); 0, or -1 if it is none. */
int egress_ip_parse(const char *text, unsigned char out[16]);

#endif
