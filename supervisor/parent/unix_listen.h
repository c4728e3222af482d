/*
 * unix_listen.h - a listening Unix socket made with the file mode it
 * keeps, for the helpers the parent starts (the sidecar relay, relay.h;
 * the egress proxy, egress_proxy.h).
 */
#ifndef SUPERVISOR_UNIX_LISTEN_H
#define SUPERVISOR_UNIX_LISTEN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Listen on `path` with file mode `mode`, replacing a socket left there;
 * non-blocking and close-on-exec. The descriptor, or -1 with why naming
 * the path and the errno.
 */
int unix_listen_at(const char *path, mode_t mode, char *why, size_t why_len);

#endif
