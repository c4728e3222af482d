/*
 * egress_metrics.h - the egress proxy's connections on /metrics, by the
 * rule that decided them and their outcome: the counts the proxy writes to
 * runtime_dir/egress/stats (parent/egress_proxy_stats.c), read at each
 * scrape. They start again from 0 when the proxy is restarted.
 */
#ifndef FRONT_EGRESS_METRICS_H
#define FRONT_EGRESS_METRICS_H

struct config;

/* With egress.allow, put the counts on every /metrics page. */
void egress_metrics_init(const struct config *cfg);

#endif
