/* http_conn.c - see http_conn.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "http_conn.h"
#include "log.h"
#include "xmalloc.h"

/*
 * civetweb tells nothing of a connection before its request is read, not
 * even its address, and slowloris clients never finish a request. So each
 * new connection takes a census of the sockets of our port: a socket not
 * seen before is admitted while its address holds fewer than `per_client`
 * admitted sockets, and shut down otherwise, whichever thread serves it.
 */

/* One connection's record, from init_connection to connection_close. */
struct http_conn {
	int fd; /* its socket once looked up; -1 not yet, -2 not found */
};

/* A client socket of our port: its descriptor and its peer. */
struct sock_id {
	int fd;
	ino_t ino; /* the socket's inode: tells a reused descriptor apart */
	int port;
	char addr[48];
};

static pthread_mutex_t census_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int listen_port;	 /* 0 until http_conn_listening */
static atomic_int census_wanted; /* connections begun since the last census */
static int per_client;
static struct sock_id *admitted; /* sockets let in, still open */
static int nadmitted;
static struct sock_id *refused;	 /* sockets shut down, not yet closed */
static int nrefused;
static struct sock_id *seen;	 /* this census's sockets */
static int cap_socks;		 /* room in each of the three arrays */
static time_t last_refusal_log;
static int refusals_unlogged;

void
http_conn_init(int max_connections, int cap)
{
	/* Threads, the queue of accepted sockets behind them, and slack. */
	cap_socks = 2 * max_connections + 64;
	admitted = xcalloc((size_t)cap_socks, sizeof(*admitted));
	refused = xcalloc((size_t)cap_socks, sizeof(*refused));
	seen = xcalloc((size_t)cap_socks, sizeof(*seen));
	per_client = cap;
}

void
http_conn_listening(int port)
{
	listen_port = port;
}

/* Fill `id` with the peer of `fd` if it is a client socket of `port`. */
static int
client_socket(int fd, int port, struct sock_id *id)
{
	struct sockaddr_storage peer, local;
	socklen_t plen = sizeof(peer), llen = sizeof(local);
	int local_port;

	if (getsockname(fd, (struct sockaddr *)&local, &llen) == -1 ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen) == -1)
		return 0;
	if (peer.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&peer;
		inet_ntop(AF_INET, &in->sin_addr, id->addr, sizeof(id->addr));
		id->port = ntohs(in->sin_port);
		local_port = ntohs(((struct sockaddr_in *)&local)->sin_port);
	} else if (peer.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&peer;
		inet_ntop(AF_INET6, &in6->sin6_addr, id->addr, sizeof(id->addr));
		id->port = ntohs(in6->sin6_port);
		local_port = ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
	} else {
		return 0;
	}
	id->fd = fd;
	return local_port == port;
}

/*
 * Call fn(fd, id, arg) for each client socket of `port` until it returns
 * nonzero; returns that value, or 0.
 */
static int
each_client_socket(int port, int (*fn)(const struct sock_id *id, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int rc = 0;

	if (d == NULL) {
		log_warn("http: cannot list /proc/self/fd to find client sockets");
		return 0;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		struct sock_id id;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || fd < 0 || fd == dirfd(d) || fd > INT_MAX)
			continue;
		if (client_socket((int)fd, port, &id))
			rc = fn(&id, arg);
	}
	closedir(d);
	return rc;
}

static int
same_sock(const struct sock_id *a, const struct sock_id *b)
{
	return a->fd == b->fd && a->ino == b->ino;
}

/* The socket of inode `ino` in `set`, or NULL. */
static const struct sock_id *
sock_by_ino(ino_t ino, const struct sock_id *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i].ino == ino)
			return &set[i];
	return NULL;
}

static int
sock_in(const struct sock_id *id, const struct sock_id *set, int n)
{
	for (int i = 0; i < n; i++)
		if (same_sock(id, &set[i]))
			return 1;
	return 0;
}

/* Keep in `set` only the sockets of this census. Returns the new count. */
static int
prune(struct sock_id *set, int n, int nseen)
{
	int kept = 0;

	for (int i = 0; i < n; i++)
		if (sock_in(&set[i], seen, nseen))
			set[kept++] = set[i];
	return kept;
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

/* Admit or refuse every socket of our port not decided yet. Lock held. */
static void
census(int port)
{
	int nseen = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (d == NULL) {
		log_warn("http: cannot list /proc/self/fd to count client connections");
		return;
	}
	/* One fstat per descriptor; only sockets not known yet are asked more. */
	while (nseen < cap_socks && (e = readdir(d)) != NULL) {
		const struct sock_id *known;
		struct stat st;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || fd < 0 || fd == dirfd(d) || fd > INT_MAX ||
		    fstat((int)fd, &st) == -1 || !S_ISSOCK(st.st_mode))
			continue;
		if ((known = sock_by_ino(st.st_ino, admitted, nadmitted)) != NULL ||
		    (known = sock_by_ino(st.st_ino, refused, nrefused)) != NULL) {
			seen[nseen] = *known;
			seen[nseen++].fd = (int)fd;
		} else if (client_socket((int)fd, port, &seen[nseen])) {
			seen[nseen++].ino = st.st_ino;
		}
	}
	closedir(d);
	nadmitted = prune(admitted, nadmitted, nseen);
	nrefused = prune(refused, nrefused, nseen);
	for (int i = 0; i < nseen; i++) {
		const struct sock_id *id = &seen[i];
		int held = 0;

		if (sock_in(id, admitted, nadmitted) || sock_in(id, refused, nrefused))
			continue;
		for (int j = 0; j < nadmitted; j++)
			held += strcmp(admitted[j].addr, id->addr) == 0;
		if (held < per_client && nadmitted < cap_socks) {
			admitted[nadmitted++] = *id;
		} else if (held >= per_client && nrefused < cap_socks) {
			/* civetweb reads end-of-file at once and closes it. */
			shutdown(id->fd, SHUT_RDWR);
			refused[nrefused++] = *id;
			log_refusal(id->addr, held);
		}
	}
}

int
http_conn_open(const struct mg_connection *conn, void **data)
{
	struct http_conn *hc = xcalloc(1, sizeof(*hc));
	int port = listen_port;

	hc->fd = -1;
	if (per_client > 0 && port > 0) {
		/*
		 * One thread at a time takes the census, again while new
		 * connections ask for one (a few rounds at most, then it
		 * serves its own); the others never wait for it. A socket is
		 * decided a moment later at worst, and shutdown works on a
		 * socket a thread already reads from.
		 */
		atomic_fetch_add(&census_wanted, 1);
		for (int round = 0; round < 3 && atomic_load(&census_wanted) > 0; round++) {
			if (pthread_mutex_trylock(&census_lock) != 0)
				break; /* the holder looks again when it is done */
			if (atomic_exchange(&census_wanted, 0) > 0)
				census(port);
			pthread_mutex_unlock(&census_lock);
		}
	}
	*data = hc;
	return 0;
}

void
http_conn_close(const struct mg_connection *conn)
{
	free(mg_get_user_connection_data(conn));
}

/* each_client_socket: stop at the socket whose peer is the request's. */
static int
match_peer(const struct sock_id *id, void *arg)
{
	const struct mg_request_info *ri = arg;

	if (id->port == ri->remote_port && strcmp(id->addr, ri->remote_addr) == 0)
		return id->fd + 1;
	return 0;
}

/*
 * The socket of a request's connection. A client that reset it can no
 * longer be found by its peer (getpeername fails), so look first among the
 * sockets the census admitted while they were connected, and check that
 * the descriptor still is that socket or one reset since. (A socket reset
 * before its census cannot be told from others: its call runs, and only
 * the write of its answer fails.)
 */
static int
find_socket(const struct mg_request_info *ri)
{
	struct sock_id id;
	int fd = -1;

	pthread_mutex_lock(&census_lock);
	for (int i = 0; i < nadmitted && fd == -1; i++)
		if (admitted[i].port == ri->remote_port &&
		    strcmp(admitted[i].addr, ri->remote_addr) == 0)
			fd = admitted[i].fd;
	pthread_mutex_unlock(&census_lock);
	if (fd >= 0) {
		struct sockaddr_storage local;
		socklen_t llen = sizeof(local);
		if (client_socket(fd, listen_port, &id)) {
			if (id.port == ri->remote_port && strcmp(id.addr, ri->remote_addr) == 0)
				return fd;
		} else if (errno == ENOTCONN &&
			   getsockname(fd, (struct sockaddr *)&local, &llen) == 0 &&
			   ((local.ss_family == AF_INET &&
			     ntohs(((struct sockaddr_in *)&local)->sin_port) == listen_port) ||
			    (local.ss_family == AF_INET6 &&
			     ntohs(((struct sockaddr_in6 *)&local)->sin6_port) == listen_port))) {
			return fd; /* reset by the client: poll will say so */
		}
	}
	return each_client_socket(listen_port, match_peer, (void *)ri) - 1;
}

int
http_conn_socket(const struct mg_connection *conn)
{
	struct http_conn *hc = mg_get_user_connection_data(conn);

	if (hc == NULL)
		return -1;
	if (hc->fd == -1) {
		const struct mg_request_info *ri = mg_get_request_info(conn);
		hc->fd = ri ? find_socket(ri) : -1;
		if (hc->fd < 0)
			hc->fd = -2; /* look once: the socket will not appear later */
	}
	return hc->fd >= 0 ? hc->fd : -1;
}

enum http_peer
http_conn_peer(const struct mg_connection *conn, int wait_ms)
{
	int fd = http_conn_socket(conn);

	if (fd < 0)
		return HTTP_PEER_UNKNOWN;
	/* A reset shows as POLLERR/POLLHUP; a FIN only as POLLRDHUP. */
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};
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
