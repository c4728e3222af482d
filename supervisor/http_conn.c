/* http_conn.c - see http_conn.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "http_conn.h"
#include "log.h"
#include "xmalloc.h"

/* One connection's record, from init_connection to connection_close. */
struct http_conn {
	struct peer_count *peer; /* its address's line in `peers` */
	int refused;
	int fd;			 /* its socket once looked up; -1 not yet, -2 not found */
};

/* How many connections one address holds now. */
struct peer_count {
	char addr[48]; /* as civetweb writes it; "" for a free line */
	int n;
};

static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct peer_count *peers; /* one line per possible connection */
static int npeers;
static int per_client;
static time_t last_refusal_log;
static int refusals_unlogged;

void
http_conn_init(int max_connections, int cap)
{
	npeers = max_connections;
	peers = xcalloc((size_t)npeers, sizeof(*peers));
	per_client = cap;
}

/*
 * The address's line with its count raised, or NULL if the table is full
 * (cannot happen: it has a line per thread). Lock held.
 */
static struct peer_count *
peer_take(const char *addr)
{
	struct peer_count *free_line = NULL;

	for (int i = 0; i < npeers; i++) {
		if (peers[i].n > 0 && strcmp(peers[i].addr, addr) == 0) {
			peers[i].n++;
			return &peers[i];
		}
		if (peers[i].n == 0 && free_line == NULL)
			free_line = &peers[i];
	}
	if (free_line) {
		snprintf(free_line->addr, sizeof(free_line->addr), "%s", addr);
		free_line->n = 1;
	}
	return free_line;
}

/*
 * The socket of this connection. civetweb does not expose it, so look for
 * the open descriptor whose two ends are this connection's: its peer
 * address and port, and our listening port. Returns -1 if none is.
 */
static int
find_socket(const struct mg_request_info *ri)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (d == NULL) {
		log_warn("http: cannot list /proc/self/fd to find a client's socket");
		return -1;
	}
	while (found == -1 && (e = readdir(d)) != NULL) {
		struct sockaddr_storage peer, local;
		socklen_t plen = sizeof(peer), llen = sizeof(local);
		char host[INET6_ADDRSTRLEN];
		int port, local_port;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || fd < 0 || fd == dirfd(d))
			continue;
		if (getpeername((int)fd, (struct sockaddr *)&peer, &plen) == -1 ||
		    getsockname((int)fd, (struct sockaddr *)&local, &llen) == -1)
			continue;
		if (peer.ss_family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&peer;
			inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
			port = ntohs(in->sin_port);
			local_port = ntohs(((struct sockaddr_in *)&local)->sin_port);
		} else if (peer.ss_family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&peer;
			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			port = ntohs(in6->sin6_port);
			local_port = ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
		} else {
			continue;
		}
		if (port == ri->remote_port && local_port == ri->server_port &&
		    strcmp(host, ri->remote_addr) == 0)
			found = (int)fd;
	}
	closedir(d);
	return found;
}

/* Log refusals at most once a second, so an attack cannot flood the log. */
static void
log_refusal(const char *addr, int held)
{
	time_t now = time(NULL);

	if (now == last_refusal_log) {
		refusals_unlogged++;
		return;
	}
	log_warnx("http: connection from %s refused: it holds %d connections "
		  "(http.max_connections_per_client); %d more refused unlogged",
		  addr, held, refusals_unlogged);
	last_refusal_log = now;
	refusals_unlogged = 0;
}

int
http_conn_open(const struct mg_connection *conn, void **data)
{
	const struct mg_request_info *ri = mg_get_request_info(conn);
	struct http_conn *hc = xcalloc(1, sizeof(*hc));
	int held = 0;

	hc->fd = -1;
	pthread_mutex_lock(&peers_lock);
	hc->peer = peer_take(ri->remote_addr);
	if (hc->peer)
		held = hc->peer->n - 1;
	if (per_client > 0 && held >= per_client) {
		hc->refused = 1;
		log_refusal(ri->remote_addr, held);
	}
	pthread_mutex_unlock(&peers_lock);
	if (hc->refused) {
		/* civetweb then reads end-of-file at once and closes it. */
		hc->fd = find_socket(ri);
		if (hc->fd >= 0)
			shutdown(hc->fd, SHUT_RDWR);
	}
	*data = hc;
	return 0;
}

void
http_conn_close(const struct mg_connection *conn)
{
	struct http_conn *hc = mg_get_user_connection_data(conn);

	if (hc == NULL)
		return;
	pthread_mutex_lock(&peers_lock);
	if (hc->peer)
		hc->peer->n--;
	pthread_mutex_unlock(&peers_lock);
	free(hc);
}

int
http_conn_refused(const struct mg_connection *conn)
{
	struct http_conn *hc = mg_get_user_connection_data(conn);
	return hc && hc->refused;
}

enum http_peer
http_conn_peer(const struct mg_connection *conn, int wait_ms)
{
	struct http_conn *hc = mg_get_user_connection_data(conn);

	if (hc == NULL)
		return HTTP_PEER_UNKNOWN;
	if (hc->fd == -1)
		hc->fd = find_socket(mg_get_request_info(conn));
	if (hc->fd < 0) {
		hc->fd = -2; /* look once: the socket will not appear later */
		return HTTP_PEER_UNKNOWN;
	}
	/* A reset shows as POLLERR/POLLHUP; a FIN only as POLLRDHUP. */
	struct pollfd p = {.fd = hc->fd, .events = POLLRDHUP};
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))
		return HTTP_PEER_GONE;
	if (!(p.revents & POLLRDHUP))
		return HTTP_PEER_HERE;
	if (wait_ms > 0) {
		p.events = 0;
		p.revents = 0;
		if (poll(&p, 1, wait_ms) == 1 && (p.revents & (POLLERR | POLLHUP)))
			return HTTP_PEER_GONE;
	}
	return HTTP_PEER_EOF;
}
