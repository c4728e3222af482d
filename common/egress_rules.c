/* egress_rules.c - see egress_rules.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_rules.h"
#include "err.h"
#include "xmalloc.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789-_."

/*
 * Denied whatever the rules allow by name: a kernel must not reach this
 * host, its loopback, link-local neighbours or a cloud's metadata service
 * through a name that resolves there. Only an allow CIDR lifts one. Each
 * is its verdict's rule; the CIDR follows BUILTIN.
 */
#define BUILTIN "built-in deny "
static const char *const builtin_denied[] = {
	BUILTIN "0.0.0.0/8",	   BUILTIN "127.0.0.0/8", BUILTIN "169.254.0.0/16",
	BUILTIN "100.100.100.200/32", BUILTIN "::/128",	  BUILTIN "::1/128",
	BUILTIN "fe80::/10",	   BUILTIN "fd00:ec2::254/128",
};

/* The IPv4 address v4 as ::ffff:a.b.c.d, into out. */
static void
map_v4(const unsigned char v4[4], unsigned char out[16])
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, v4, 4);
}

int
egress_ip_parse(const char *text, unsigned char out[16])
{
	unsigned char v4[4];

	if (inet_pton(AF_INET, text, v4) == 1) {
		map_v4(v4, out);
		return 0;
	}
	return inet_pton(AF_INET6, text, out) == 1 ? 0 : -1;
}

static int
is_v4_mapped(const unsigned char a[16])
{
	static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(a, prefix, sizeof(prefix)) == 0;
}

static int
in_cidr(const unsigned char a[16], const unsigned char net[16], int prefix)
{
	int whole = prefix / 8, rest = prefix % 8;

	if (memcmp(a, net, (size_t)whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (a[whole] & mask) == (net[whole] & mask);
}

/* Every dot-separated label of `name` is 1 to 63 bytes: 0, else -1. */
static int
labels_ok(const char *name)
{
	for (const char *p = name;; p++) {
		size_t l = strcspn(p, ".");
		if (l == 0 || l > 63)
			return -1;
		p += l;
		if (*p == '\0')
			return 0;
	}
}

int
egress_host_normalise(const char *host, char *out)
{
	size_t len = strlen(host);
	unsigned char ip[16];

	int bracketed = len > 0 && host[0] == '[';

	if (bracketed) {
		if (len < 3 || host[len - 1] != ']')
			return -1;
		host++;
		len -= 2;
	}
	if (len == 0 || len > EGRESS_NAME_MAX + 1)
		return -1;
	for (size_t i = 0; i < len; i++)
		out[i] = (char)tolower((unsigned char)host[i]);
	out[len] = '\0';
	if (bracketed || strchr(out, ':') != NULL)
		return inet_pton(AF_INET6, out, ip) == 1 ? 0 : -1;
	if (out[len - 1] == '.')
		out[--len] = '\0';
	if (len == 0 || len > EGRESS_NAME_MAX || strspn(out, NAME_CHARS) != len)
		return -1;
	return labels_ok(out);
}

/* The CIDR rule `text` (lower case) into *rule; 0 or -1 with why. */
static int
parse_cidr(const char *text, struct egress_rule *rule, char *why, size_t why_len)
{
	char addr[EGRESS_NAME_MAX + 2];
	const char *slash = strchr(text, '/');
	size_t alen = slash != NULL ? (size_t)(slash - text) : strlen(text);

	snprintf(addr, sizeof(addr), "%.*s", (int)alen, text);
	if (egress_ip_parse(addr, rule->addr) == -1)
		return err_set(why, why_len, "\"%s\": not an IPv4 or IPv6 address", addr);
	int v4 = strchr(addr, ':') == NULL;
	int max = v4 ? 32 : 128, len = max;
	if (slash != NULL) {
		char *end;
		long l = strtol(slash + 1, &end, 10);
		if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || l > max)
			return err_set(why, why_len, "\"%s\": the prefix length must be 0 to %d",
				       text, max);
		len = (int)l;
	}
	rule->kind = EGRESS_RULE_CIDR;
	rule->prefix = v4 ? len + 96 : len;
	unsigned char net[16];
	memset(net, 0, sizeof(net));
	memcpy(net, rule->addr, (size_t)(rule->prefix / 8));
	if (rule->prefix % 8 != 0)
		net[rule->prefix / 8] = rule->addr[rule->prefix / 8] &
					(unsigned char)(0xff << (8 - rule->prefix % 8));
	if (memcmp(net, rule->addr, 16) != 0)
		return err_set(why, why_len, "\"%s\": bits are set past the prefix length", text);
	return 0;
}

/* The port after the last ':' of `text` into *port; 0 or -1 with why. */
static int
parse_port(const char *text, const char *colon, int *port, char *why, size_t why_len)
{
	char *end;
	long p = strtol(colon + 1, &end, 10);

	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || p < 1 || p > 65535)
		return err_set(why, why_len, "\"%s\": the port must be 1 to 65535", text);
	*port = (int)p;
	return 0;
}

/* The name rule `text` (lower case) into *rule; 0 or -1 with why. */
static int
parse_name(const char *text, struct egress_rule *rule, char *why, size_t why_len)
{
	char name[EGRESS_NAME_MAX + 2], norm[EGRESS_NAME_MAX + 2];
	const char *colon = strrchr(text, ':');
	size_t nlen = colon != NULL ? (size_t)(colon - text) : strlen(text);
	unsigned char ip[16];

	if (colon != NULL && parse_port(text, colon, &rule->port, why, why_len) == -1)
		return -1;
	snprintf(name, sizeof(name), "%.*s", (int)nlen, text);
	const char *bare = name;
	rule->kind = EGRESS_RULE_NAME;
	if (strncmp(name, "*.", 2) == 0) {
		rule->kind = EGRESS_RULE_SUFFIX;
		bare = name + 2;
	}
	if (strchr(bare, '*') != NULL)
		return err_set(why, why_len,
			       "\"%s\": a wildcard is only \"*.\" at the start of a name", text);
	if (egress_ip_parse(bare, ip) == 0)
		return err_set(why, why_len, "\"%s\": an IP address is written as a CIDR, "
			       "without a port", text);
	if (egress_host_normalise(bare, norm) == -1 || strchr(norm, ':') != NULL)
		return err_set(why, why_len, "\"%s\": not a host name", text);
	rule->name = rule->kind == EGRESS_RULE_SUFFIX ? xasprintf(".%s", norm) : xstrdup(norm);
	return 0;
}

/* The rule as verdicts name it. Caller frees. */
static char *
rule_text(const struct egress_rule *rule, int deny)
{
	const char *verb = deny ? "deny" : "allow";
	char addr[INET6_ADDRSTRLEN];

	if (rule->kind == EGRESS_RULE_CIDR) {
		int v4 = is_v4_mapped(rule->addr);
		inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? rule->addr + 12 : rule->addr, addr,
			  sizeof(addr));
		return xasprintf("%s %s/%d", verb, addr, v4 ? rule->prefix - 96 : rule->prefix);
	}
	const char *star = rule->kind == EGRESS_RULE_SUFFIX ? "*" : "";
	if (rule->port != 0)
		return xasprintf("%s %s%s:%d", verb, star, rule->name, rule->port);
	return xasprintf("%s %s%s", verb, star, rule->name);
}

int
egress_rules_add(struct egress_rules *r, int deny, const char *text, char *why,
		 size_t why_len)
{
	struct egress_rule rule = {0};
	char low[EGRESS_NAME_MAX + 16];
	size_t len = strlen(text);

	if (len == 0)
		return err_set(why, why_len, "an empty rule");
	if (len >= sizeof(low))
		return err_set(why, why_len, "a rule of %zu bytes (at most %zu)", len,
			       sizeof(low) - 1);
	for (size_t i = 0; i <= len; i++)
		low[i] = (char)tolower((unsigned char)text[i]);
	int bad = strchr(low, '/') != NULL || egress_ip_parse(low, rule.addr) == 0
			  ? parse_cidr(low, &rule, why, why_len)
			  : parse_name(low, &rule, why, why_len);
	if (bad == -1) {
		free(rule.name);
		return -1;
	}
	rule.text = rule_text(&rule, deny);
	struct egress_rule **v = deny ? &r->deny : &r->allow;
	size_t *n = deny ? &r->n_deny : &r->n_allow;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = rule;
	return 0;
}

static void
rules_free(struct egress_rule *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].text);
		free(v[i].name);
	}
	free(v);
}

void
egress_rules_free(struct egress_rules *r)
{
	rules_free(r->allow, r->n_allow);
	rules_free(r->deny, r->n_deny);
	memset(r, 0, sizeof(*r));
}

static int
name_matches(const struct egress_rule *rule, const char *host, int port)
{
	if (rule->kind == EGRESS_RULE_CIDR || (rule->port != 0 && rule->port != port))
		return 0;
	if (rule->kind == EGRESS_RULE_NAME)
		return strcmp(rule->name, host) == 0;
	size_t hl = strlen(host), sl = strlen(rule->name);
	return hl > sl && strcmp(host + hl - sl, rule->name) == 0;
}

/* The first rule of v[n] holding `addr`, or NULL. */
static const struct egress_rule *
cidr_holding(const struct egress_rule *v, size_t n, const unsigned char addr[16])
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == EGRESS_RULE_CIDR && in_cidr(addr, v[i].addr, v[i].prefix))
			return &v[i];
	return NULL;
}

static const struct egress_rule *
name_holding(const struct egress_rule *v, size_t n, const char *host, int port)
{
	for (size_t i = 0; i < n; i++)
		if (name_matches(&v[i], host, port))
			return &v[i];
	return NULL;
}

static void
verdict(struct egress_verdict *v, int allowed, const char *rule)
{
	v->allowed = allowed;
	v->rule = rule;
}

void
egress_check_host(const struct egress_rules *r, const char *host, int port,
		  struct egress_verdict *v)
{
	char norm[EGRESS_NAME_MAX + 2];
	unsigned char ip[16];
	const struct egress_rule *hit;

	if (egress_host_normalise(host, norm) == -1)
		return verdict(v, 0, "malformed host");
	if (port < 1 || port > 65535)
		return verdict(v, 0, "malformed port");
	if (egress_ip_parse(norm, ip) == 0) {
		if ((hit = cidr_holding(r->deny, r->n_deny, ip)) != NULL)
			return verdict(v, 0, hit->text);
		if ((hit = cidr_holding(r->allow, r->n_allow, ip)) != NULL)
			return verdict(v, 1, hit->text);
		return verdict(v, 0, "default deny (an IP literal needs an allow CIDR)");
	}
	if ((hit = name_holding(r->deny, r->n_deny, norm, port)) != NULL)
		return verdict(v, 0, hit->text);
	if ((hit = name_holding(r->allow, r->n_allow, norm, port)) != NULL)
		return verdict(v, 1, hit->text);
	verdict(v, 0, "default deny (no allow rule names the host)");
}

/* The built-in denied range holding a, as its verdict names it, or NULL. */
static const char *
builtin_holding(const unsigned char a[16])
{
	for (size_t i = 0; i < sizeof(builtin_denied) / sizeof(builtin_denied[0]); i++) {
		struct egress_rule rule = {0};
		const char *cidr = builtin_denied[i] + strlen(BUILTIN);
		if (parse_cidr(cidr, &rule, NULL, 0) == 0 && in_cidr(a, rule.addr, rule.prefix))
			return builtin_denied[i];
	}
	return NULL;
}

void
egress_check_addr(const struct egress_rules *r, const unsigned char *addr, size_t len,
		  struct egress_verdict *v)
{
	unsigned char a[16];
	const struct egress_rule *hit;
	const char *builtin;

	if (len == 4)
		map_v4(addr, a);
	else
		memcpy(a, addr, 16);
	if ((hit = cidr_holding(r->deny, r->n_deny, a)) != NULL)
		return verdict(v, 0, hit->text);
	if ((hit = cidr_holding(r->allow, r->n_allow, a)) != NULL)
		return verdict(v, 1, hit->text);
	if ((builtin = builtin_holding(a)) != NULL)
		return verdict(v, 0, builtin);
	verdict(v, 1, NULL);
}
