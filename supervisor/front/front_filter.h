/*
 * front_filter.h - the seccomp allow-list of the unprivileged front process
 * (civetweb, MCP JSON-RPC, sessions, jobs, the control socket, the pool's
 * IPC to workers over descriptors it receives, libcurl, logging).
 *
 * The list was measured (strace of the daemon's own threads through the
 * system tests), not guessed; doc/README.privsep, "The front's filter",
 * gives it with a reason per line. A call off the list kills the whole
 * process (SIGSYS): the front never forks, execs, changes identity, chowns,
 * signals another process, mounts or traces, so such a call means it was
 * subverted, and the parent sees it die.
 */
#ifndef SUPERVISOR_FRONT_FILTER_H
#define SUPERVISOR_FRONT_FILTER_H

#include <stddef.h>

/*
 * Install the filter on every thread of the calling process (TSYNC; sets
 * no_new_privs; irreversible and inherited). Call it once, in the front,
 * after its start-up and before it reads anything untrusted. Library set-up
 * may come before or after it: curl_global_init, mg_start, openlog and the
 * first getaddrinfo all pass it (test_front_filter runs them under it).
 * What may not follow it: fork, exec, chown/chmod (control_open), rmdir,
 * signals to other processes. Logs nothing: returns 0, or -1 with a message
 * in why[why_len] for the caller to log.
 */
int front_filter_install(char *why, size_t why_len);

/*
 * Print the filter in libseccomp's pseudo filter code to fd (for tests and
 * for reading what the rules compile to). 0 or -1.
 */
int front_filter_export(int fd);

#endif
