/*
 * config_egress.c - the checks of egress.inject (config_int.h): each
 * record's host and header, and, once every key is read, that egress.allow
 * lets each injected host through (an injected host that is refused would
 * be a secret configured for nothing, or a typo).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_int.h"
#include "egress_rules.h"
#include "err.h"

/*
 * Headers the proxy must own: framing and routing. Injecting one would
 * let a secret file change where or how a request goes, not only who it
 * says it is from.
 */
static const char *const reserved[] = {
	"host", "content-length", "transfer-encoding", "connection", "keep-alive",
	"te", "trailer", "upgrade", "expect",
};

int
check_inject_host(struct config *c, const char *v, char *why, size_t why_len)
{
	struct egress_rules r = {0};
	int rc = egress_rules_add(&r, 0, v, why, why_len);

	(void)c;
	if (rc == 0 && r.allow[0].kind == EGRESS_RULE_CIDR)
		rc = err_set(why, why_len, "%s: an injected host is a NAME or *.SUFFIX "
			     "(its certificate is made for the name), not an address", v);
	egress_rules_free(&r);
	return rc;
}

int
check_inject_header(struct config *c, const char *v, char *why, size_t why_len)
{
	static const char token[] = "!#$%&'*+-.^_`|~0123456789"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	(void)c;
	if (v[0] == '\0' || strspn(v, token) != strlen(v) || strlen(v) > 64)
		return err_set(why, why_len, "%s: a header name is a token of at most 64 letters, "
			       "digits and !#$%%&'*+-.^_`|~", v);
	if (strncasecmp(v, "proxy-", 6) == 0)
		return err_set(why, why_len, "%s: a Proxy-* header is for a proxy, never sent on", v);
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcasecmp(v, reserved[i]) == 0)
			return err_set(why, why_len, "%s: the proxy writes this header itself", v);
	return 0;
}

/* A host and header pair is injected once: two values would be ambiguous. */
int
check_inject(struct config *c, size_t i, char *why, size_t why_len)
{
	const struct config_egress_inject *x = config_egress_inject_at(c, i);

	for (size_t j = 0; j < i; j++) {
		const struct config_egress_inject *y = config_egress_inject_at(c, j);
		if (strcasecmp(x->host, y->host) == 0 && strcasecmp(x->header, y->header) == 0)
			return err_set(why, why_len, "host %s header %s is already injected by "
				       "item %zu", x->host, x->header, j + 1);
	}
	return 0;
}

/*
 * A name the record's host covers, to ask the rules about: the name
 * itself, or one below a wildcard's suffix; *port its port, 443 if none.
 */
static void
sample_of(const char *host, char *out, size_t len, int *port)
{
	const char *colon = strrchr(host, ':');

	*port = colon ? atoi(colon + 1) : 443;
	int n = colon ? (int)(colon - host) : (int)strlen(host);
	if (strncmp(host, "*.", 2) == 0)
		snprintf(out, len, "codeexecd-check.%.*s", n - 2, host + 2);
	else
		snprintf(out, len, "%.*s", n, host);
}

const char *
config_egress_finish(const struct config *c, char *why, size_t why_len)
{
	struct egress_rules r = {0};
	const char *bad = NULL;

	if (c->egress_inject.n == 0)
		return NULL;
	if (c->egress_allow.n == 0) {
		err_set(why, why_len, "egress.inject: needs egress.allow (no proxy runs without it)");
		return "egress.inject";
	}
	for (size_t i = 0; i < c->egress_allow.n; i++)
		egress_rules_add(&r, 0, c->egress_allow.v[i], why, why_len);
	for (size_t i = 0; i < c->egress_deny.n; i++)
		egress_rules_add(&r, 1, c->egress_deny.v[i], why, why_len);
	for (size_t i = 0; i < c->egress_inject.n && bad == NULL; i++) {
		const struct config_egress_inject *x = config_egress_inject_at(c, i);
		char name[EGRESS_NAME_MAX + 32];
		int port;
		struct egress_verdict v;
		sample_of(x->host, name, sizeof(name), &port);
		egress_check_host(&r, name, port, &v);
		if (!v.allowed) {
			err_set(why, why_len, "egress.inject item %zu: host %s is refused by the "
				"egress rules (%s): allow it, or remove the item", i + 1, x->host,
				v.rule);
			bad = "egress.inject";
		}
	}
	egress_rules_free(&r);
	return bad;
}
