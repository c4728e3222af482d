/* egress_proxy.c - see egress_proxy.h: the proxy's start-up, sessions and loop. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "egress_proxy.h"
#include "egress_proxy_int.h"
#include "err.h"
#include "log.h"
#include "pump.h"
#include "unix_listen.h"
#include "xmalloc.h"

/* Sessions served at once, and connections of all sessions at once. */
#define MAX_SESSIONS 256
#define MAX_CONNS 256
#define ID_MAX 64

struct session {
	char id[ID_MAX + 1];	 /* "": free */
	char identity[ID_MAX + 1];
	char bound[ID_MAX + 1];	 /* the MCP session it runs ("bind"); "": none yet */
	int lfd;
	int made;		 /* we made its socket (else the parent's, handed to us) */
	unsigned long long bytes; /* moved so far, both ways */
	int conns;		 /* open now */
};

struct conn {
	int c, u;		/* client, upstream; c == -1: free */
	struct session *s;
	char head[EGRESS_HEAD_MAX + 1];
	size_t head_len;
	char host[EGRESS_NAME_MAX + 3];
	int port;
	const char *rule;	/* borrowed from the rules */
	double started;
	struct pump h[2];	/* h[0]: client -> upstream, h[1]: upstream -> client */
	struct egress_intercept *x; /* intercepted: its thread's, which has c and u */
};

static struct {
	const char *dir;
	mode_t mode;
	unsigned long long max_bytes; /* 0: no limit */
	int max_conns;
	struct egress_rules rules;
	struct session sessions[MAX_SESSIONS];
	struct conn conns[MAX_CONNS];
	char ctl[16384];	/* a partial control line (an inject's holds a secret) */
	size_t ctl_len;
	const char *ca_dir;	/* "ca=DIR": intercept the injected hosts; NULL: none */
	const char *upstream_ca; /* "upstream_ca=FILE", or "" */
	int notify[2];		/* intercepting threads tell their end here */
	int ready;		/* the parent's "ready" was read */
	int ctl_fd;		/* a listening socket handed with the next open line; -1: none */
} P = {.upstream_ca = "", .notify = {-1, -1}, .ctl_fd = -1};

/* The audit line of a connection that ends, refused or not. */
static void
audit(const struct conn *k, int allowed, const char *why)
{
	log_info("egress: session %s identity %s host %s port %d %s rule \"%s\" bytes_out %llu "
		 "bytes_in %llu duration_s %.3f%s%s",
		 k->s->bound[0] ? k->s->bound : k->s->id, k->s->identity, k->host[0] ? k->host : "-", k->port,
		 allowed ? "allowed" : "denied", k->rule ? k->rule : "-", k->h[0].moved,
		 k->h[1].moved, clock_mono() - k->started, why ? ": " : "", why ? why : "");
	egress_stats_count(k->rule ? k->rule : "-", allowed);
}

static void
conn_close(struct conn *k)
{
	if (k->c != -1)
		close(k->c);
	if (k->u != -1)
		close(k->u);
	k->c = k->u = -1;
	k->s->conns--;
}

/* Answer `status` with a body naming the rule (or the reason), audit, and close. */
static void
refuse(struct conn *k, int status, const char *rule, const char *why)
{
	static const char *const reasons[] = {[400] = "Bad Request", [403] = "Forbidden",
					      [431] = "Request Header Fields Too Large",
					      [502] = "Bad Gateway"};
	char body[600], head[1400];
	const char *reason = status < 600 && reasons[status] ? reasons[status] : "Error";

	k->rule = rule;
	int blen = snprintf(body, sizeof(body), "codeexecd egress: %s %s:%d refused: %s\n",
			    k->host[0] ? "request for" : "request", k->host[0] ? k->host : "-",
			    k->port, rule ? rule : why);
	int hlen = snprintf(head, sizeof(head),
			    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
			    "X-Codeexecd-Egress-Rule: %s\r\nConnection: close\r\n\r\n%s",
			    status, reason, blen, rule ? rule : "-", body);
	/* A fresh socket's buffer holds this much: one send, never blocking. */
	if (send(k->c, head, (size_t)hlen, MSG_NOSIGNAL | MSG_DONTWAIT) == -1)
		log_debug("egress: session %s: answer %d: %s", k->s->id, status, strerror(errno));
	/* Unread input would make the close a reset that loses the answer. */
	char sink[4096];
	for (int i = 0; i < 16 && read(k->c, sink, sizeof(sink)) > 0; i++)
		;
	audit(k, 0, why);
	conn_close(k);
}

/*
 * A CONNECT to a host with injected headers goes to a thread of its own
 * (egress_proxy_tls.c). 1 if it went, or was refused; 0: tunnel it.
 */
static int
intercept(struct conn *k, const char *norm)
{
	const struct egress_inject *m[EGRESS_INJECT_MAX];
	size_t n = egress_inject_match(norm, k->port, m, EGRESS_INJECT_MAX);
	char why[ERR_LEN];

	if (n == 0)
		return 0;
	struct egress_intercept *x = xcalloc(1, sizeof(*x));
	x->c = k->c;
	x->u = k->u;
	snprintf(x->host, sizeof(x->host), "%s", norm);
	x->port = k->port;
	memcpy(x->m, m, n * sizeof(m[0]));
	x->n = n;
	x->budget = P.max_bytes ? P.max_bytes - k->s->bytes : 0;
	x->notify = P.notify[1];
	x->slot = (int)(k - P.conns);
	/* What the client sent past its CONNECT would be its TLS hello: none is expected yet. */
	if (egress_tls_start(x, why, sizeof(why)) == -1) {
		free(x);
		refuse(k, 502, NULL, why);
		return 1;
	}
	k->x = x;
	return 1;
}

/* A thread ended its connection (on P.notify): account, audit and close. */
static void
intercept_end(void)
{
	unsigned char slot[2];

	if (read(P.notify[0], slot, 2) != 2)
		return;
	struct conn *k = &P.conns[slot[0] << 8 | slot[1]];
	struct egress_intercept *x = k->x;
	k->x = NULL;
	k->h[0].moved = x->out;
	k->h[1].moved = x->in;
	k->s->bytes += x->out + x->in;
	if (x->refused)
		k->rule = x->rule; /* the limit, or none for a 502 */
	audit(k, !x->refused, x->why[0] ? x->why : NULL);
	conn_close(k);
	free(x);
}

/* The head is complete: check, dial, and start relaying. */
static void
start(struct conn *k, const struct egress_req *r)
{
	struct egress_verdict v;
	char why[ERR_LEN] = "", norm[EGRESS_NAME_MAX + 2];

	snprintf(k->host, sizeof(k->host), "%s", r->host);
	k->port = r->port;
	egress_check_host(&P.rules, r->host, r->port, &v);
	if (!v.allowed)
		return refuse(k, 403, v.rule, NULL);
	k->rule = v.rule;
	if (P.max_bytes && k->s->bytes >= P.max_bytes)
		return refuse(k, 403, "egress.max_bytes", NULL);
	egress_host_normalise(r->host, norm);
	k->u = egress_dial(&P.rules, norm, r->port, &v, why, sizeof(why));
	if (k->u == -1 && !v.allowed)
		return refuse(k, 403, v.rule, NULL);
	if (k->u == -1)
		return refuse(k, 502, NULL, why);
	if (r->is_connect && intercept(k, norm))
		return;
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	const char *first = r->is_connect ? k->head + r->head_len : r->fwd;
	size_t first_len = r->is_connect ? k->head_len - r->head_len : r->fwd_len;
	/* What the client sent past its head goes on after it (a TLS hello, a body). */
	size_t rest = r->is_connect ? 0 : k->head_len - r->head_len;
	memcpy(k->h[0].buf, first, first_len);
	memcpy(k->h[0].buf + first_len, k->head + r->head_len, rest);
	k->h[0].len = first_len + rest;
	if (r->is_connect) {
		memcpy(k->h[1].buf, established, sizeof(established) - 1);
		k->h[1].len = sizeof(established) - 1;
	}
}

/* Read more of k's head; start it once it is whole. */
static void
read_head(struct conn *k)
{
	struct egress_req r;
	char why[256];
	ssize_t n = read(k->c, k->head + k->head_len, EGRESS_HEAD_MAX - k->head_len);

	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		audit(k, 0, "the client left before its request");
		return conn_close(k);
	}
	if (n < 0)
		return;
	k->head_len += (size_t)n;
	k->head[k->head_len] = '\0';
	int rc = egress_req_parse(k->head, k->head_len, &r, why, sizeof(why));
	if (rc > 1)
		return refuse(k, rc, NULL, why);
	if (rc == 1)
		start(k, &r);
	free(r.fwd);
}

/* Relay k both ways, charging its session; closes it when done or over the limit. */
static void
relay(struct conn *k)
{
	unsigned long long before = k->h[0].moved + k->h[1].moved;

	if (pump_move(&k->h[0], k->c, k->u) == -1 || pump_move(&k->h[1], k->u, k->c) == -1) {
		k->s->bytes += k->h[0].moved + k->h[1].moved - before;
		audit(k, 1, "a connection failed");
		return conn_close(k);
	}
	k->s->bytes += k->h[0].moved + k->h[1].moved - before;
	if (P.max_bytes && k->s->bytes > P.max_bytes) {
		k->rule = "egress.max_bytes";
		audit(k, 0, "the session's bytes ran out");
		return conn_close(k);
	}
	if (k->h[0].eof > 1 && k->h[1].eof > 1) {
		audit(k, 1, NULL);
		conn_close(k);
	}
}

/* A new client of session s. */
static void
take(struct session *s)
{
	int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct conn *k = NULL;

	if (c == -1)
		return;
	for (int i = 0; i < MAX_CONNS && k == NULL; i++)
		if (P.conns[i].c == -1)
			k = &P.conns[i];
	if (k == NULL) {
		log_warnx("egress: session %s: %d connections of all sessions are open; "
			  "refusing one", s->id, MAX_CONNS);
		close(c);
		return;
	}
	memset(k, 0, sizeof(*k));
	k->c = c;
	k->u = -1;
	k->s = s;
	k->started = clock_mono();
	pump_reset(&k->h[0]);
	pump_reset(&k->h[1]);
	if (++s->conns > P.max_conns)
		refuse(k, 403, "egress.max_connections", NULL);
}

/* A session id or identity: letters, digits and "_-.@:" only, at most ID_MAX. */
static int
word_ok(const char *w)
{
	size_t len = strlen(w);
	return len > 0 && len <= ID_MAX &&
	       strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.@:") ==
		       len;
}

static struct session *
session_named(const char *id)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (strcmp(P.sessions[i].id, id) == 0)
			return &P.sessions[i];
	return NULL;
}

/*
 * "open ID IDENTITY": serve session ID on `fd`, the listening socket the
 * parent handed with the line, or (-1) on DIR/ID.sock made here.
 */
static void
session_open(const char *id, const char *identity, int fd)
{
	struct session *s = session_named(id);
	char why[ERR_LEN];

	if (s != NULL || (s = session_named("")) == NULL || strchr(id, '.') != NULL) {
		log_warnx("egress: cannot open session %s: known, bad, or %d open", id,
			  MAX_SESSIONS);
		if (fd != -1)
			close(fd);
		return;
	}
	s->made = fd == -1;
	if (fd == -1) {
		char *path = xasprintf("%s/%s.sock", P.dir, id);
		fd = unix_listen_at(path, P.mode, why, sizeof(why));
		free(path);
	}
	if ((s->lfd = fd) == -1) {
		log_warnx("egress: session %s: %s", id, why);
		return;
	}
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->identity, sizeof(s->identity), "%s", identity);
	s->bound[0] = '\0';
	s->bytes = 0;
	s->conns = 0;
}

/* "close ID": its socket goes, and its connections with it. */
static void
session_close(const char *id)
{
	struct session *s = session_named(id);

	if (s == NULL || id[0] == '\0')
		return;
	for (int i = 0; i < MAX_CONNS; i++)
		if (P.conns[i].x != NULL && P.conns[i].s == s) {
			/* Its thread ends on the shutdown, and intercept_end closes it. */
			shutdown(P.conns[i].c, SHUT_RDWR);
			shutdown(P.conns[i].u, SHUT_RDWR);
		} else if (P.conns[i].c != -1 && P.conns[i].s == s) {
			audit(&P.conns[i], 1, "the session closed");
			conn_close(&P.conns[i]);
		}
	/* The parent removes the socket it made. */
	if (s->made) {
		char *path = xasprintf("%s/%s.sock", P.dir, id);
		unlink(path);
		free(path);
	}
	close(s->lfd);
	s->id[0] = '\0';
}

/* "bind ID SESSION IDENTITY": socket ID's connections are SESSION's, of IDENTITY. */
static void
session_bind(const char *id, const char *session, const char *identity)
{
	struct session *s = id[0] ? session_named(id) : NULL;

	if (s == NULL) {
		log_warnx("egress: bind: no session %s", id);
		return;
	}
	snprintf(s->bound, sizeof(s->bound), "%s", session);
	snprintf(s->identity, sizeof(s->identity), "%s", identity);
	log_info("egress: worker %s: session %s identity %s", id, session, identity);
}

static void
control_line(char *line)
{
	char *save = NULL, why[ERR_LEN];

	if (strncmp(line, "inject ", 7) == 0) {
		if (P.ready || egress_inject_add(line + 7, why, sizeof(why)) == -1)
			log_warnx("egress: an inject line refused: %s",
				  P.ready ? "after ready" : why);
		explicit_bzero(line, strlen(line));
		return;
	}
	if (strcmp(line, "ready") == 0) {
		P.ready = 1;
		return;
	}
	char *verb = strtok_r(line, " ", &save);
	char *id = strtok_r(NULL, " ", &save);
	char *identity = strtok_r(NULL, " ", &save);

	if (verb != NULL && id != NULL && word_ok(id) && strcmp(verb, "close") == 0)
		return session_close(id);
	char *named = strtok_r(NULL, " ", &save);
	if (verb != NULL && id != NULL && identity != NULL && named != NULL && word_ok(id) &&
	    word_ok(identity) && word_ok(named) && strcmp(verb, "bind") == 0)
		return session_bind(id, identity, named);
	int fd = P.ctl_fd;

	P.ctl_fd = -1;
	if (verb != NULL && id != NULL && identity != NULL && word_ok(id) && word_ok(identity) &&
	    strcmp(verb, "open") == 0)
		return session_open(id, identity, fd);
	if (fd != -1)
		close(fd);
	log_warnx("egress: a control line that is not \"open ID IDENTITY\", "
		  "\"bind ID SESSION IDENTITY\" or \"close ID\"");
}

/*
 * Read stdin into buf: a socket's message with the listening descriptor
 * it may carry (into P.ctl_fd), or a pipe's bytes (the proxy run by hand).
 */
static ssize_t
read_stdin(char *buf, size_t len)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	ssize_t n = recvmsg(0, &m, MSG_CMSG_CLOEXEC);

	if (n == -1 && errno == ENOTSOCK)
		return read(0, buf, len);
	struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int))) {
		if (P.ctl_fd != -1)
			close(P.ctl_fd);
		memcpy(&P.ctl_fd, CMSG_DATA(c), sizeof(int));
	}
	return n;
}

/* The complete lines read; with stop_at_ready, none past "ready" (they wait for the filter). */
static void
control_lines(int stop_at_ready)
{
	char *nl;

	while ((!stop_at_ready || !P.ready) && (nl = strchr(P.ctl, '\n')) != NULL) {
		*nl = '\0';
		control_line(P.ctl);
		P.ctl_len -= (size_t)(nl + 1 - P.ctl);
		memmove(P.ctl, nl + 1, P.ctl_len + 1);
		/* No copy of an inject's secret stays behind in the buffer. */
		explicit_bzero(P.ctl + P.ctl_len, sizeof(P.ctl) - P.ctl_len);
	}
	if (P.ctl_len == sizeof(P.ctl) - 1) {
		log_warnx("egress: a control line too long; dropped");
		P.ctl_len = 0;
	}
}

/* The parent's lines on stdin; its end closing ends the proxy. */
static void
read_control(int stop_at_ready)
{
	ssize_t n = read_stdin(P.ctl + P.ctl_len, sizeof(P.ctl) - 1 - P.ctl_len);

	if (n == 0)
		exit(0);
	if (n < 0)
		return;
	P.ctl_len += (size_t)n;
	P.ctl[P.ctl_len] = '\0';
	control_lines(stop_at_ready);
}

/*
 * With ca=DIR: the parent's inject lines, up to its "ready", the CA and
 * the TLS contexts, all before the filter (files, keys, the system's CAs).
 */
static void
setup_interception(void)
{
	char why[ERR_LEN];

	while (!P.ready)
		read_control(1);
	if (egress_ca_setup(P.ca_dir, why, sizeof(why)) == -1 ||
	    egress_tls_init(P.upstream_ca, why, sizeof(why)) == -1)
		fatalx("egress: interception: %s", why);
	/* The parent waits for the bundle before its workers name it (a socket pair: ours to write). */
	if (write(0, "ready\n", 6) != 6)
		log_debug("egress: tell the parent ready: %s", strerror(errno));
}

/* argv's settings and rules; fatal on any error (the parent checked them at load). */
static void
setup(int argc, char *argv[])
{
	char why[ERR_LEN];

	P.dir = argv[2];
	P.mode = (mode_t)strtol(argv[3], NULL, 8);
	P.max_bytes = strtoull(argv[5], NULL, 10);
	P.max_conns = atoi(argv[6]);
	if (strcmp(argv[7], "-") != 0 && egress_hosts_load(argv[7], why, sizeof(why)) == -1)
		fatalx("egress: %s", why);
	for (int i = 8; i < argc; i++)
		if (strncmp(argv[i], "ca=", 3) == 0)
			P.ca_dir = argv[i] + 3;
		else if (strncmp(argv[i], "upstream_ca=", 12) == 0)
			P.upstream_ca = argv[i] + 12;
		else if ((argv[i][0] != '+' && argv[i][0] != '-') ||
		    egress_rules_add(&P.rules, argv[i][0] == '-', argv[i] + 1, why,
				     sizeof(why)) == -1)
			fatalx("egress: rule %s: %s", argv[i], why);
	for (int i = 0; i < MAX_CONNS; i++)
		P.conns[i].c = -1;
	if (pipe2(P.notify, O_CLOEXEC) == -1)
		fatal("egress: pipe");
	if (P.ca_dir != NULL)
		setup_interception();
}

/* One pass of the loop: poll the control pipe, the sessions' sockets and the connections. */
static void
serve(void)
{
	static struct pollfd pfd[1 + MAX_SESSIONS + 2 * MAX_CONNS + 1];
	int n = 1;

	pfd[0] = (struct pollfd){.fd = 0, .events = POLLIN};
	for (int i = 0; i < MAX_SESSIONS; i++)
		pfd[n++] = (struct pollfd){.fd = P.sessions[i].id[0] ? P.sessions[i].lfd : -1,
					   .events = POLLIN};
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *k = &P.conns[i];
		if (k->x != NULL) { /* its thread's */
			pfd[n++] = (struct pollfd){.fd = -1};
			pfd[n++] = (struct pollfd){.fd = -1};
			continue;
		}
		int relaying = k->u != -1;
		short in = relaying ? pump_wants_in(&k->h[0]) : POLLIN;
		pfd[n++] = (struct pollfd){.fd = k->c, .events = in | pump_wants_out(&k->h[1])};
		pfd[n++] = (struct pollfd){.fd = k->u, .events = pump_wants_in(&k->h[1]) |
								    pump_wants_out(&k->h[0])};
	}
	pfd[n++] = (struct pollfd){.fd = P.notify[0], .events = POLLIN};
	if (poll(pfd, (nfds_t)n, egress_stats_flush(P.dir)) == -1 && errno != EINTR)
		fatal("egress: poll");
	if (pfd[0].revents)
		read_control(0);
	if (pfd[n - 1].revents)
		intercept_end();
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (P.sessions[i].id[0] && (pfd[1 + i].revents & POLLIN))
			take(&P.sessions[i]);
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *k = &P.conns[i];
		struct pollfd *f = &pfd[1 + MAX_SESSIONS + 2 * i];
		if (k->c == -1 || k->x != NULL || (f[0].revents | f[1].revents) == 0)
			continue;
		if (k->u == -1)
			read_head(k);
		else
			relay(k);
	}
}

int
egress_proxy_main(int argc, char *argv[])
{
	if (argc < 8)
		return 2;
	log_init("codeexecd-egress", atoi(argv[4]), LOG_DAEMON);
	/* Exec made us dumpable: no kernel of our uid may trace or write into us. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		fatal("egress: prctl PR_SET_DUMPABLE");
	setup(argc, argv);
	char why[ERR_LEN];
	if (egress_proxy_filter_install(why, sizeof(why)) == -1)
		fatalx("egress: seccomp: %s", why);
	log_info("egress: proxy for %zu allow and %zu deny rules, sockets in %s%s%s",
		 P.rules.n_allow, P.rules.n_deny, P.dir, P.ca_dir ? ", intercepting with the CA in " : "",
		 P.ca_dir ? P.ca_dir : "");
	/* Lines read with "ready" but not yet taken. */
	control_lines(0);
	for (;;)
		serve();
}
