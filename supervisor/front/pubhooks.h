/*
 * pubhooks.h - publishing at the end of things, hooked into session.c:
 *
 *   - the end of a call: with a publisher marked auto_publish, the
 *     artifacts a result lists are published before the result is handed
 *     back, and the result says where they went ("published");
 *   - the end of a session (closed, idle expiry, shutdown): the files of
 *     its outputs/ are published to every publisher marked on_close before
 *     its directory is removed.
 *
 * Files are opened by the session's worker (FILE_OPEN) outside the
 * session's line, while the session is busy with the call or closed, so
 * nothing else runs on the worker meanwhile. The log names what went where.
 */
#ifndef SUPERVISOR_PUBHOOKS_H
#define SUPERVISOR_PUBHOOKS_H

struct config;

/* Remember the configuration (borrowed) and hook into session.c. */
void pubhooks_init(const struct config *cfg);

#endif
