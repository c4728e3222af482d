/*
 * egress_proxy_hosts.c - egress.hosts_file (egress_proxy_int.h): names the
 * proxy resolves from a file in /etc/hosts format before it asks DNS.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_proxy_int.h"
#include "err.h"
#include "xmalloc.h"

struct host_entry {
	char *name;
	struct egress_addr addr;
};

static struct host_entry *entries;
static size_t n_entries;

/* One line: ADDRESS NAME... # comment. A line that is not one is skipped. */
static void
add_line(char *line)
{
	struct egress_addr a;
	char *save = NULL, norm[EGRESS_NAME_MAX + 2];

	line[strcspn(line, "#\n")] = '\0';
	char *tok = strtok_r(line, " \t", &save);
	if (tok == NULL || egress_ip_parse(tok, a.a) == -1)
		return;
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		if (egress_host_normalise(tok, norm) == -1)
			continue;
		entries = xreallocarray(entries, n_entries + 1, sizeof(*entries));
		entries[n_entries].name = xstrdup(norm);
		entries[n_entries++].addr = a;
	}
}

int
egress_hosts_load(const char *path, char *why, size_t why_len)
{
	FILE *f = fopen(path, "re");
	char line[1024];

	if (f == NULL)
		return err_set(why, why_len, "egress.hosts_file %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL)
		add_line(line);
	fclose(f);
	return 0;
}

size_t
egress_hosts_lookup(const char *name, struct egress_addr *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < n_entries && n < max; i++)
		if (strcmp(entries[i].name, name) == 0)
			out[n++] = entries[i].addr;
	return n;
}
