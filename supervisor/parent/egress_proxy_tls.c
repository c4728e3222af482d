/*
 * egress_proxy_tls.c - an intercepted CONNECT (egress_proxy_int.h), in a
 * thread of its own so that the blocking TLS calls never stall the loop.
 *
 * The upstream's TLS comes first, its certificate verified against the
 * system's CAs (and egress.upstream_ca_file) for the host name: one that
 * does not verify gets the client a 502 naming why, before the proxy has
 * shown any certificate of its own. Then the client gets 200, the proxy's
 * TLS with a leaf for the host signed by its CA, and its request head
 * rewritten by egress_inject_head. That head says Connection: close, so a
 * connection carries one request and every request gets the headers; the
 * rest (the body, the answer) is relayed as it comes.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "egress_proxy_int.h"
#include "err.h"
#include "xmalloc.h"

/* Seconds a handshake or a write may block, and a relay may stay silent. */
#define IO_TIMEOUT_S 60
#define IDLE_TIMEOUT_MS (300 * 1000)

static SSL_CTX *client_ctx, *server_ctx;

int
egress_tls_init(const char *upstream_ca, char *why, size_t why_len)
{
	client_ctx = SSL_CTX_new(TLS_client_method());
	server_ctx = SSL_CTX_new(TLS_server_method());
	if (client_ctx == NULL || server_ctx == NULL)
		return err_set(why, why_len, "SSL_CTX_new failed");
	SSL_CTX_set_min_proto_version(client_ctx, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(server_ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(client_ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_load_verify_locations(client_ctx, EGRESS_SYSTEM_CA_FILE, NULL) != 1)
		return err_set(why, why_len, "%s: cannot load the system's CAs",
			       EGRESS_SYSTEM_CA_FILE);
	if (upstream_ca[0] && SSL_CTX_load_verify_locations(client_ctx, upstream_ca, NULL) != 1)
		return err_set(why, why_len, "egress.upstream_ca_file %s: not a PEM file of CAs",
			       upstream_ca);
	return 0;
}

/* Blocking, with timeouts: only this thread uses the descriptor now. */
static void
blocking(int fd)
{
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* The answer `status` with a body saying why, on the socket or, if tls, through it. */
static void
answer(struct egress_intercept *x, SSL *tls, int status, const char *reason)
{
	char body[600], msg[1200];
	int blen = snprintf(body, sizeof(body), "codeexecd egress: request for %s:%d refused: %s\n",
			    x->host, x->port, x->why);
	int len = snprintf(msg, sizeof(msg),
			   "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
			   "X-Codeexecd-Egress-Rule: %s\r\nConnection: close\r\n\r\n%s",
			   status, reason, blen, x->rule ? x->rule : "-", body);
	x->refused = 1;
	if (tls != NULL)
		SSL_write(tls, msg, len);
	else
		send(x->c, msg, (size_t)len, MSG_NOSIGNAL);
}

/* What OpenSSL says went wrong with `ssl`, in why. */
static void
tls_why(struct egress_intercept *x, SSL *ssl, const char *what)
{
	long v = SSL_get_verify_result(ssl);
	unsigned long e = ERR_get_error();

	if (v != X509_V_OK)
		snprintf(x->why, sizeof(x->why), "%s: the upstream's certificate does not verify: %s",
			 what, X509_verify_cert_error_string(v));
	else
		snprintf(x->why, sizeof(x->why), "%s: %s", what,
			 e ? ERR_reason_error_string(e) : strerror(errno));
	ERR_clear_error();
}

/* TLS to the upstream, verified for x->host. The session, or NULL with x->why. */
static SSL *
upstream_tls(struct egress_intercept *x)
{
	SSL *u = SSL_new(client_ctx);

	if (u == NULL || SSL_set_fd(u, x->u) != 1 || SSL_set_tlsext_host_name(u, x->host) != 1 ||
	    SSL_set1_host(u, x->host) != 1 || SSL_connect(u) != 1) {
		tls_why(x, u, "TLS with the upstream");
		SSL_free(u);
		return NULL;
	}
	SSL_clear_mode(u, SSL_MODE_AUTO_RETRY);
	return u;
}

/* The client's TLS, with the leaf of x->host. The session, or NULL with x->why. */
static SSL *
client_tls(struct egress_intercept *x)
{
	X509 *leaf = egress_ca_leaf(x->host);
	SSL *c = leaf ? SSL_new(server_ctx) : NULL;

	if (c == NULL || SSL_use_certificate(c, leaf) != 1 ||
	    SSL_use_PrivateKey(c, egress_ca_leaf_key()) != 1 || SSL_set_fd(c, x->c) != 1 ||
	    SSL_accept(c) != 1) {
		snprintf(x->why, sizeof(x->why), "the client's TLS handshake failed (does it trust "
			 "the daemon's CA bundle?)");
		ERR_clear_error();
		SSL_free(c);
		c = NULL;
	}
	X509_free(leaf);
	if (c != NULL)
		SSL_clear_mode(c, SSL_MODE_AUTO_RETRY);
	return c;
}

/* Read the client's head, rewrite it and send it on, with what followed it. 0, or -1. */
static int
send_head(struct egress_intercept *x, SSL *c, SSL *u)
{
	char *head = xmalloc(EGRESS_HEAD_MAX + 1), *out = NULL, auth[EGRESS_NAME_MAX + 10];
	size_t len = 0, out_len = 0, head_len = 0;
	int rc = 0;

	snprintf(auth, sizeof(auth), x->port == 443 ? "%s" : "%s:%d", x->host, x->port);
	while (rc == 0) {
		int n = SSL_read(c, head + len, (int)(EGRESS_HEAD_MAX - len));
		if (n <= 0 && SSL_get_error(c, n) == SSL_ERROR_WANT_READ)
			continue;
		if (n <= 0) {
			snprintf(x->why, sizeof(x->why), "the client left before its request");
			break;
		}
		len += (size_t)n;
		head[len] = '\0';
		rc = egress_inject_head(head, len, auth, x->m, x->n, &out, &out_len, &head_len,
					x->why, sizeof(x->why));
	}
	if (rc > 1)
		answer(x, c, rc, rc == 431 ? "Request Header Fields Too Large" : "Bad Request");
	if (rc == 1 && (SSL_write(u, out, (int)out_len) <= 0 ||
			(len > head_len && SSL_write(u, head + head_len, (int)(len - head_len)) <= 0))) {
		snprintf(x->why, sizeof(x->why), "the upstream closed before the request was sent");
		rc = -1;
	}
	if (rc == 1)
		x->out += len;
	free(head);
	if (out != NULL) {
		explicit_bzero(out, out_len); /* it holds the secret */
		free(out);
	}
	return rc == 1 ? 0 : -1;
}

/* Move what `from` has to `to`. 1 moved, 0 nothing yet, -1 from's end (or an error). */
static int
move(SSL *from, SSL *to, unsigned long long *count)
{
	char b[16384];
	int n = SSL_read(from, b, sizeof(b));

	if (n <= 0)
		return SSL_get_error(from, n) == SSL_ERROR_WANT_READ ? 0 : -1;
	if (SSL_write(to, b, n) <= 0)
		return -1;
	*count += (unsigned long long)n;
	return 1;
}

/* Relay both ways until the upstream ends its answer, the client leaves, or the budget runs out. */
static void
relay(struct egress_intercept *x, SSL *c, SSL *u)
{
	int client_open = 1;

	for (;;) {
		struct pollfd p[2] = {{.fd = client_open ? x->c : -1, .events = POLLIN},
				      {.fd = x->u, .events = POLLIN}};
		/* Bytes OpenSSL holds already are not on the socket for poll to see. */
		int pending = (client_open && SSL_pending(c) > 0) || SSL_pending(u) > 0;
		if (poll(p, 2, pending ? 0 : IDLE_TIMEOUT_MS) == 0 && !pending) {
			snprintf(x->why, sizeof(x->why), "idle for %d s", IDLE_TIMEOUT_MS / 1000);
			return;
		}
		int c_ready = client_open && (SSL_pending(c) > 0 || p[0].revents);
		int u_ready = SSL_pending(u) > 0 || p[1].revents;
		if (c_ready && move(c, u, &x->out) == -1)
			client_open = 0; /* its answer may still come */
		if (u_ready && move(u, c, &x->in) == -1) {
			SSL_shutdown(c);
			return;
		}
		if (x->budget && x->out + x->in > x->budget) {
			x->rule = "egress.max_bytes";
			x->refused = 1;
			snprintf(x->why, sizeof(x->why), "the session's bytes ran out");
			return;
		}
	}
}

static void *
run(void *arg)
{
	struct egress_intercept *x = arg;
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	SSL *u, *c = NULL;

	blocking(x->c);
	blocking(x->u);
	if ((u = upstream_tls(x)) == NULL) {
		answer(x, NULL, 502, "Bad Gateway");
	} else if (send(x->c, established, sizeof(established) - 1, MSG_NOSIGNAL) == -1) {
		snprintf(x->why, sizeof(x->why), "the client left: %s", strerror(errno));
	} else if ((c = client_tls(x)) != NULL && send_head(x, c, u) == 0) {
		relay(x, c, u);
	}
	SSL_free(c);
	SSL_free(u);
	ERR_clear_error();
	/* The loop closes the descriptors and audits; a full pipe cannot happen (one byte a slot). */
	unsigned char slot[2] = {(unsigned char)(x->slot >> 8), (unsigned char)x->slot};
	if (write(x->notify, slot, 2) != 2)
		abort();
	return NULL;
}

int
egress_tls_start(struct egress_intercept *x, char *why, size_t why_len)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &a, run, x);
	pthread_attr_destroy(&a);
	return rc == 0 ? 0 : err_set(why, why_len, "pthread_create: %s", strerror(rc));
}
