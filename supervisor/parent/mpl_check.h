/*
 * mpl_check.h - the start-up check of matplotlib_backend: a backend that
 * kernels could not load fails start-up, rather than every figure later.
 *
 * The environment's interpreter, with the kernels' environment and a
 * throw-away HOME, imports matplotlib.pyplot and switches to the backend
 * (which imports its module). The default (inline) and none are not
 * checked: an environment without matplotlib must still start.
 */
#ifndef SUPERVISOR_MPL_CHECK_H
#define SUPERVISOR_MPL_CHECK_H

#include <stddef.h>

struct config;

/* Seconds the check may take (a first import builds matplotlib's font cache). */
#define MPL_CHECK_TIMEOUT_S 120

/*
 * Check cfg->matplotlib_backend in the environment (built already).
 * Returns 0, or -1 with a message naming the key, the value and the
 * interpreter's last line of complaint in why.
 */
int mpl_check(const struct config *cfg, char *why, size_t why_len);

#endif
