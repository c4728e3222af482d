/*
 * egress_proxy.h - the egress proxy (issue 36): `codeexecd --egress-proxy`,
 * a process the parent starts as the daemon's unprivileged user, with no
 * capability, that serves HTTP CONNECT and plain absolute-URI HTTP to the
 * hosts egress.allow names and egress.deny does not (egress_rules.h).
 *
 * Each session has its own listening Unix socket, DIR/ID.sock, made when
 * the proxy reads "open ID IDENTITY" on its standard input and removed at
 * "close ID"; whatever arrives on it is that session's, counted against
 * its egress.max_bytes and egress.max_connections. The socket is the
 * credential: a kernel is given only its own session's (README.privsep
 * says why another session's kernel cannot reach it), so no token that a
 * kernel could read and replay crosses the boundary.
 *
 * The proxy resolves names itself, egress.hosts_file first and then DNS,
 * and never connects to an address a client names for an allowed name;
 * every address it would connect to is checked again (the DNS rebinding
 * check). A refused request gets "403 Forbidden" with a body and an
 * X-Codeexecd-Egress-Rule header naming the rule; every connection is
 * logged (session, identity, host, port, rule, bytes, duration).
 */
#ifndef SUPERVISOR_EGRESS_PROXY_H
#define SUPERVISOR_EGRESS_PROXY_H

/*
 * The option that makes codeexecd the proxy; argv: OPTION DIR MODE FG
 * MAX_BYTES MAX_CONNECTIONS HOSTS_FILE RULE... where HOSTS_FILE is "-" for
 * none, MODE the sockets' octal file mode, and each RULE "+rule" (allow)
 * or "-rule" (deny).
 */
#define EGRESS_PROXY_OPTION "--egress-proxy"

/* Run the proxy of argv (as above) until its input closes; returns an exit status. */
int egress_proxy_main(int argc, char *argv[]);

#endif
