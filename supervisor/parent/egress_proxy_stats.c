/*
 * egress_proxy_stats.c - the proxy's connections counted by the rule that
 * decided them, written to DIR/stats for the front's /metrics
 * (front/egress_metrics.h): one line per rule, "ALLOWED DENIED RULE".
 * The main loop's thread alone counts (every audit line is its).
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "egress_proxy_int.h"
#include "log.h"
#include "xmalloc.h"

/* Rules are the configuration's and a few built-in ones: a bound, not a guess. */
#define STATS_RULES 512
/* Written at most this often. */
#define STATS_EVERY_S 1.0

static struct {
	char *rule;
	unsigned long long allowed, denied;
} R[STATS_RULES];
static size_t n_rules;
static int dirty;
static double written;

void
egress_stats_count(const char *rule, int allowed)
{
	size_t i = 0;

	while (i < n_rules && strcmp(R[i].rule, rule) != 0)
		i++;
	if (i == n_rules) {
		if (n_rules == STATS_RULES)
			return;
		R[n_rules++].rule = xstrdup(rule);
	}
	if (allowed)
		R[i].allowed++;
	else
		R[i].denied++;
	dirty = 1;
}

/* DIR/stats.tmp written whole, then renamed over DIR/stats. */
static void
write_stats(const char *dir)
{
	char *tmp = xasprintf("%s/stats.tmp", dir), *path = xasprintf("%s/stats", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	FILE *f = fd == -1 ? NULL : fdopen(fd, "w");

	if (f == NULL) {
		log_warn("egress: %s", tmp);
		if (fd != -1)
			close(fd);
	} else {
		for (size_t i = 0; i < n_rules; i++)
			fprintf(f, "%llu %llu %s\n", R[i].allowed, R[i].denied, R[i].rule);
		/* The front reads it as its own user: readable whatever our umask. */
		if (fclose(f) == EOF || chmod(tmp, 0644) == -1 || rename(tmp, path) == -1)
			log_warn("egress: write %s", path);
	}
	free(tmp);
	free(path);
}

int
egress_stats_flush(const char *dir)
{
	if (!dirty)
		return -1;
	double now = clock_mono(), due = written + STATS_EVERY_S;
	if (now < due)
		return (int)((due - now) * 1000) + 1;
	write_stats(dir);
	written = now;
	dirty = 0;
	return -1;
}
