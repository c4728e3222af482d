/*
 * http_conn.h - what the HTTP front knows of each client connection: how
 * many connections its address holds, its socket, and whether the client
 * is still there.
 *
 * civetweb serves each connection on one thread of its own and keeps the
 * socket to itself. These functions are its init_connection and
 * connection_close callbacks, and they own the record they attach to each
 * connection (mg_get_user_connection_data) from one to the other.
 */
#ifndef SUPERVISOR_HTTP_CONN_H
#define SUPERVISOR_HTTP_CONN_H

struct mg_connection;

/*
 * Track at most `max_connections` connections at once (civetweb's thread
 * count) and let one address hold `per_client` of them (0: no cap). Call
 * once, before civetweb starts.
 */
void http_conn_init(int max_connections, int per_client);
/* The port we listen on, once known: the census counts its sockets. */
void http_conn_listening(int port);
/*
 * civetweb's init_connection callback, on the connection's thread before
 * anything is read: admit the new sockets of our port whose address holds
 * fewer than its share, and shut down the others, so that civetweb closes
 * them at once.
 */
int http_conn_open(const struct mg_connection *conn, void **data);
/* civetweb's connection_close callback: uncount and free the record. */
void http_conn_close(const struct mg_connection *conn);

/*
 * The socket of `conn`, or -1 if it cannot be found (looked up once). It
 * stays civetweb's: read or write it only while civetweb does not, and
 * never close it.
 */
int http_conn_socket(const struct mg_connection *conn);

enum http_peer {
	HTTP_PEER_HERE,	  /* nothing heard: the client waits */
	HTTP_PEER_EOF,	  /* it sent FIN: a half-close, or a close not yet proven */
	HTTP_PEER_GONE,	  /* reset, or a write failed: it is gone */
	HTTP_PEER_UNKNOWN /* the socket could not be found */
};

/*
 * What the socket says of the client now, waiting up to `wait_ms` for a
 * reset. A FIN alone does not prove a client gone: one that half-closes
 * (shutdown(SHUT_WR)) still reads its answer. Only a write to a client
 * that really closed draws the reset that proves it.
 */
enum http_peer http_conn_peer(const struct mg_connection *conn, int wait_ms);

#endif
