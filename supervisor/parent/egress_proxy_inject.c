/*
 * egress_proxy_inject.c - the egress proxy's table of egress.inject
 * headers (egress_proxy_int.h), told by the parent on the proxy's stdin
 * before it serves anyone: the secret values never pass through argv,
 * where any process could read them.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "egress_proxy_int.h"
#include "err.h"
#include "xmalloc.h"

#define INJECTS_MAX 256

static struct egress_inject injects[INJECTS_MAX];
static size_t n_injects;

int
egress_inject_add(const char *line, char *why, size_t why_len)
{
	const char *sp1 = strchr(line, ' ');
	const char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;

	if (sp2 == NULL || sp2 == sp1 + 1 || sp2[1] == '\0')
		return err_set(why, why_len, "an inject line is HOST HEADER VALUE");
	if (n_injects == INJECTS_MAX)
		return err_set(why, why_len, "more than %d injected headers", INJECTS_MAX);
	for (const char *p = sp2 + 1; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return err_set(why, why_len, "an injected value holds a control character");
	struct egress_inject *x = &injects[n_injects];
	char *host = xstrndup(line, (size_t)(sp1 - line));
	memset(x, 0, sizeof(*x));
	int rc = egress_rules_add(&x->host, 0, host, why, why_len);
	free(host);
	if (rc == -1)
		return -1;
	x->header = xstrndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	x->value = xstrdup(sp2 + 1);
	n_injects++;
	return 0;
}

int
egress_inject_any(void)
{
	return n_injects > 0;
}

size_t
egress_inject_match(const char *host, int port, const struct egress_inject **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < n_injects && n < max; i++) {
		struct egress_verdict v;
		egress_check_host(&injects[i].host, host, port, &v);
		if (v.allowed)
			out[n++] = &injects[i];
	}
	return n;
}
