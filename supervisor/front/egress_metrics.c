/* egress_metrics.c - see egress_metrics.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "egress_metrics.h"
#include "metrics.h"
#include "xmalloc.h"

static char *stats_path;

/* `s` as a Prometheus label value: backslash, quote and newline escaped. */
static void
label(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			buf_adds(b, "\\n");
		else
			buf_add(b, s, 1);
	}
}

static void
render(struct buf *b)
{
	FILE *f = fopen(stats_path, "re");
	char line[1024];

	buf_adds(b, "# HELP codeexecd_egress_connections_total Connections of kernels through "
		    "the egress proxy, by the rule that decided them and outcome (from 0 again "
		    "when the proxy restarts).\n"
		    "# TYPE codeexecd_egress_connections_total counter\n");
	if (f == NULL)
		return; /* no connection yet */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n[2];
		int at = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llu %llu %n", &n[0], &n[1], &at) != 2 || at == 0)
			continue;
		for (int o = 0; o < 2; o++) {
			buf_adds(b, "codeexecd_egress_connections_total{rule=\"");
			label(b, line + at);
			buf_printf(b, "\",outcome=\"%s\"} %llu\n", o ? "denied" : "allowed", n[o]);
		}
	}
	fclose(f);
}

void
egress_metrics_init(const struct config *cfg)
{
	if (cfg->egress_allow.n == 0)
		return;
	stats_path = xasprintf("%s/egress/stats", cfg->runtime_dir);
	metrics_add_renderer(render);
}
