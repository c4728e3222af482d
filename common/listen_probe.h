/*
 * listen_probe.h - can this process listen on HOST:PORT? Asked before the
 * fork (main.c) and by the front when civetweb could not listen, so
 * that both say why in the same words.
 */
#ifndef COMMON_LISTEN_PROBE_H
#define COMMON_LISTEN_PROBE_H

#include <stddef.h>

/*
 * Bind a TCP socket to every address `host` resolves to, at `port`, and
 * close it. An address in use counts as usable when `in_use_ok` (codeexecd
 * -n while the daemon runs). 0, or -1 with why[why_len]:
 * "cannot listen on HOST:PORT: REASON".
 */
int listen_probe(const char *host, int port, int in_use_ok, char *why, size_t why_len);

#endif
