/*
 * test_front_filter.c - the front process's seccomp filter, installed for
 * real in forked children. One child does under the filter what the front
 * does: a civetweb server on several threads, json-c parsing the requests
 * this test sends it over HTTP, libcurl fetching (plain HTTP through the
 * threaded resolver, and a TLS handshake), the connection census over
 * /proc/self/fd, IPC on a socket received with SCM_RIGHTS, syslog, a log
 * file, a SIGHUP reload; it must exit 0. Other children each make one call
 * the front never makes (fork, execve, ptrace, setuid, chown, kill of
 * another process, a non-native call...) and must die of SIGSYS; the calls
 * libraries probe harmlessly get EPERM or ENOSYS and the child lives on.
 */
#include "autoconf.h"

#include <check.h>
#include <civetweb.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netdb.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "front_filter.h"
#include "ipc.h"
#include "log.h"
#include "publish.h"

/* In a child: fail with a distinct status unless cond. */
#define EXPECT(n, cond)                                                                           \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "check %d failed: %s (errno %d)\n", n, #cond, errno);    \
			_exit(n);                                                                 \
		}                                                                                 \
	} while (0)

static void
install_or_die(void)
{
	char err[256];

	if (front_filter_install(err, sizeof(err)) != 0) {
		fprintf(stderr, "front_filter_install: %s\n", err);
		_exit(99);
	}
}

/* Wait for pid; describe how it ended on stderr. Returns the wait status. */
static int
reap(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fprintf(stderr, "child %d: killed by signal %d\n", (int)pid, WTERMSIG(status));
	else
		fprintf(stderr, "child %d: exit status %d\n", (int)pid, WEXITSTATUS(status));
	return status;
}

static int
in_child(void (*fn)(void))
{
	pid_t pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return reap(pid);
}

/* ---- the front's work, in a child under the filter ---------------------------------- */

static int port;	    /* of the child's civetweb */
static int ipc_fd = -1;	    /* the socket received with SCM_RIGHTS */
static volatile sig_atomic_t hup;
static int quit_pipe[2];
static char tmpdir[] = "/tmp/test_front_filter.XXXXXX";

struct sink {
	char buf[4096];
	size_t len;
};

static size_t
sink_write(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;

	if (len > sizeof(s->buf) - 1 - s->len)
		len = sizeof(s->buf) - 1 - s->len;
	memcpy(s->buf + s->len, p, len);
	s->len += len;
	s->buf[s->len] = '\0';
	return size * n;
}

/* GET url with libcurl as assets.c does; the CURLcode. */
static CURLcode
fetch(const char *url, struct sink *s)
{
	CURL *c = curl_easy_init();

	if (c == NULL)
		return CURLE_FAILED_INIT;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	return rc;
}

static int
asset_handler(struct mg_connection *conn, void *arg)
{
	(void)arg;
	mg_send_http_ok(conn, "text/plain", 5);
	mg_write(conn, "asset", 5);
	return 200;
}

/* Sockets of our port, counted as http_conn.c counts them: /proc/self/fd. */
static int
census(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[300], target[64];
		struct sockaddr_storage local, peer;
		socklen_t llen = sizeof(local), plen = sizeof(peer);
		int fd = atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (e->d_name[0] == '.' || len <= 0 || strncmp(target, "socket:", 7) != 0)
			continue;
		if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0 &&
		    local.ss_family == AF_INET &&
		    ntohs(((struct sockaddr_in *)&local)->sin_port) == port &&
		    getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* One IPC round trip with the test over the received socket. */
static int
ipc_echo(const char *text, char *out, size_t outlen)
{
	struct iovec iov = {.iov_base = (void *)text, .iov_len = strlen(text)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (sendmsg(ipc_fd, &m, MSG_NOSIGNAL) != (ssize_t)strlen(text))
		return -1;
	ssize_t n = recv(ipc_fd, out, outlen - 1, 0);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* getaddrinfo as libcurl's resolver thread calls it: NSS, /etc/hosts, the netlink probe. */
static int
resolves(const char *host)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_ADDRCONFIG}, *res;

	if (getaddrinfo(host, "80", &hints, &res) != 0)
		return 0;
	freeaddrinfo(res);
	return 1;
}

/* POST /rpc {"id": N, "host": "name", "fetch": "path"}: parse, resolve, fetch, census,
 * IPC; answer in JSON. */
static int
rpc_handler(struct mg_connection *conn, void *arg)
{
	char body[2048], url[128], echo[64];
	struct sink s = {.len = 0};
	int n = mg_read(conn, body, sizeof(body) - 1);
	struct json_object *req, *id, *path, *host;

	(void)arg;
	body[n > 0 ? n : 0] = '\0';
	req = json_tokener_parse(body);
	if (req == NULL || !json_object_object_get_ex(req, "id", &id) ||
	    !json_object_object_get_ex(req, "fetch", &path) ||
	    !json_object_object_get_ex(req, "host", &host)) {
		mg_send_http_error(conn, 400, "bad request");
		json_object_put(req);
		return 400;
	}
	/* A name other than localhost goes through libcurl's resolver thread. */
	snprintf(url, sizeof(url), "http://%s:%d%s", json_object_get_string(host), port,
		 json_object_get_string(path));
	CURLcode rc = fetch(url, &s);
	/* A TLS handshake against a plain HTTP port: OpenSSL loads its CA store. */
	struct sink tls = {.len = 0};
	char tlsurl[64];
	snprintf(tlsurl, sizeof(tlsurl), "https://127.0.0.1:%d/asset", port);
	CURLcode tlsrc = fetch(tlsurl, &tls);

	struct json_object *res = json_object_new_object();
	json_object_object_add(res, "id", json_object_get(id));
	json_object_object_add(res, "fetched", json_object_new_string(rc == CURLE_OK ? s.buf
							       : curl_easy_strerror(rc)));
	json_object_object_add(res, "resolved",
			       json_object_new_boolean(resolves(json_object_get_string(host))));
	json_object_object_add(res, "tls_failed", json_object_new_boolean(tlsrc != CURLE_OK));
	json_object_object_add(res, "census", json_object_new_int(census()));
	json_object_object_add(res, "ipc", json_object_new_string(
		ipc_echo("ping", echo, sizeof(echo)) == 0 ? echo : "failed"));
	const char *text = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
	mg_send_http_ok(conn, "application/json", (long long)strlen(text));
	mg_write(conn, text, strlen(text));
	log_info("test_front_filter: answered request %d", json_object_get_int(id));
	json_object_put(res);
	json_object_put(req);
	return 200;
}

static int
quit_handler(struct mg_connection *conn, void *arg)
{
	(void)arg;
	mg_send_http_ok(conn, "text/plain", 3);
	mg_write(conn, "bye", 3);
	if (write(quit_pipe[1], "q", 1) != 1)
		return 500;
	return 200;
}

static void
on_hup(int sig)
{
	(void)sig;
	hup = 1;
}

/* Re-read the "configuration" and reopen the log file, as a SIGHUP reload does. */
static int
reload(void)
{
	char path[64], line[64];

	snprintf(path, sizeof(path), "%s/config", tmpdir);
	FILE *f = fopen(path, "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL)
		return -1;
	fclose(f);
	snprintf(path, sizeof(path), "%s/log", tmpdir);
	f = fopen(path, "a");
	if (f == NULL)
		return -1;
	fprintf(f, "reloaded: %s", line);
	fclose(f);
	return 0;
}

/* Take the descriptor the test passes over sock (SCM_RIGHTS). */
static int
recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	int fd = -1;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (c != NULL && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

/*
 * The front under its filter: only signal handlers and syslog come before
 * it; the libraries' set-up (libcurl, civetweb) and everything after runs
 * under it, the strictest order a front could choose. Reports its port on
 * report_fd.
 */
static void
front_child(int sock, int report_fd)
{
	struct sigaction sa = {.sa_handler = on_hup};
	struct mg_callbacks cb = {0};
	struct mg_server_port ports[2];
	const char *options[] = {"listening_ports", "127.0.0.1:0", "num_threads", "4",
				 "enable_keep_alive", "yes", "tcp_nodelay", "1", NULL};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_init("test_front_filter", 0, LOG_DAEMON);
	EXPECT(10, pipe2(quit_pipe, O_CLOEXEC) == 0);
	install_or_die();

	/* Everything below runs under the filter: no library was set up before. */
	EXPECT(11, curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK);
	mg_init_library(MG_FEATURES_IPV6);
	struct mg_context *ctx = mg_start(&cb, NULL, options);
	EXPECT(12, ctx != NULL);
	mg_set_request_handler(ctx, "/rpc$", rpc_handler, NULL);
	mg_set_request_handler(ctx, "/asset$", asset_handler, NULL);
	mg_set_request_handler(ctx, "/quit$", quit_handler, NULL);
	EXPECT(13, mg_get_server_ports(ctx, 2, ports) >= 1);
	port = ports[0].port;
	EXPECT(14, (ipc_fd = recv_fd(sock)) >= 0);
	EXPECT(15, write(report_fd, &port, sizeof(port)) == sizeof(port));
	log_info("test_front_filter: listening on port %d", port);

	struct pollfd p = {.fd = quit_pipe[0], .events = POLLIN};
	for (;;) {
		int n = poll(&p, 1, 100);
		if (hup) {
			hup = 0;
			EXPECT(16, reload() == 0);
			EXPECT(17, write(report_fd, "h", 1) == 1);
		}
		if (n == 1)
			break;
		EXPECT(18, n == 0 || errno == EINTR);
	}
	mg_stop(ctx);
	mg_exit_library();
	curl_global_cleanup();
	/* exit, not _exit: at-exit work (LeakSanitizer's in sanitizer builds) is filtered too. */
	exit(0);
}

/* POST body to the child's /rpc (from this unfiltered process); the answer in s. */
static long
post(const char *path, const char *body, struct sink *s)
{
	char url[128];
	long code = 0;
	CURL *c = curl_easy_init();

	ck_assert_ptr_nonnull(c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	if (body != NULL)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	CURLcode rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	else
		fprintf(stderr, "%s: %s\n", url, curl_easy_strerror(rc));
	curl_easy_cleanup(c);
	return code;
}

/* Answer the child's IPC frames until it closes: the worker's side. */
static void *
ipc_peer(void *arg)
{
	int fd = *(int *)arg;
	char buf[64];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (send(fd, "pong", 4, MSG_NOSIGNAL) != 4)
			break;
	return NULL;
}

/*
 * A name of this host that resolves to 127.0.0.1 and that libcurl does not
 * answer itself (it does "localhost"), so its resolver thread and NSS run
 * under the filter; "localhost" where the host has no such name.
 */
static const char *
loopback_name(void)
{
	static char name[256];
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	int loop = 1;

	if (gethostname(name, sizeof(name) - 1) != 0 || getaddrinfo(name, "80", &hints, &res) != 0)
		return "localhost";
	for (struct addrinfo *a = res; a != NULL; a = a->ai_next)
		loop &= ((struct sockaddr_in *)a->ai_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
	freeaddrinfo(res);
	return loop ? name : "localhost";
}

/* ---- a session file published, in a child under the filter ---------------- */

static char pub_dir[] = "/tmp/test_front_publish.XXXXXX";

/*
 * What the front does with a FILE answer: take the descriptor from the
 * worker's frame (recvmsg, SCM_RIGHTS), fstat and read it, and copy it
 * under a local publisher's base_dir (mkdir, openat, write, fsync, renameat).
 */
static void
publish_child(int sock)
{
	struct ipc_reader r;
	struct ipc_msg m;
	char err[ERR_LEN], base[128];
	struct publish_out out;
	int rc;

	install_or_die();
	ipc_reader_init(&r, sock);
	while ((rc = ipc_reader_next(&r, &m, err, sizeof(err))) == 0)
		EXPECT(40, ipc_reader_fill(&r) > 0);
	EXPECT(41, rc == 1 && m.hdr.type == IPC_FILE && m.has_fd);
	snprintf(base, sizeof(base), "%s/published", pub_dir);
	struct config_publisher p = {.name = "l", .type = "local", .base_dir = base,
				     .account_url = "", .container = "", .sas_token_file = "",
				     .account_key_file = "", .max_bytes = 1000,
				     .prefix = "{identity}/{session}", .content_type = ""};
	struct publish_src src = {m.fd, "plots/a.csv", "text/csv", "me", "s1"};
	EXPECT(42, publish(&p, &src, &out, err, sizeof(err)) == 0);
	EXPECT(43, out.size == 4);
	ipc_msg_clear(&m);
	ipc_reader_free(&r);
	exit(0);
}

START_TEST(test_front_publishes)
{
	int sv[2], fd;
	char src[160], got[16] = "";
	struct buf b;

	ck_assert_ptr_nonnull(mkdtemp(pub_dir));
	snprintf(src, sizeof(src), "%s/src.csv", pub_dir);
	ck_assert_int_ge(fd = open(src, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600), 0);
	ck_assert_int_eq(write(fd, "a,b\n", 4), 4);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid_t pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		close(sv[0]);
		publish_child(sv[1]);
	}
	close(sv[1]);
	struct json_object *o = json_tokener_parse("{\"file\": {}}");
	buf_init(&b);
	ck_assert_int_eq(ipc_frame(&b, IPC_FILE, 1, o, NULL, 0), 0);
	ck_assert_int_eq(ipc_write_fd(sv[0], b.data, b.len, fd), 0);
	json_object_put(o);
	buf_free(&b);
	int status = reap(pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the publishing child failed");
	snprintf(src, sizeof(src), "%s/published/me/s1/plots/a.csv", pub_dir);
	int in = open(src, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(in, 0);
	ck_assert_int_eq(read(in, got, sizeof(got)), 4);
	ck_assert_str_eq(got, "a,b\n");
	close(in);
	close(fd);
	close(sv[0]);
}
END_TEST

START_TEST(test_front_work)
{
	int sock[2], ipc[2], report[2];
	char cbuf[CMSG_SPACE(sizeof(int))], byte = 'f', path[64];
	pthread_t peer;

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/config", tmpdir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("reloaded\n", f);
	fclose(f);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ipc), 0);
	ck_assert_int_eq(pipe2(report, O_CLOEXEC), 0);
	pid_t pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		close(sock[0]);
		close(report[0]);
		close(ipc[0]);
		close(ipc[1]);
		front_child(sock[1], report[1]);
	}
	close(sock[1]);
	close(report[1]);

	/* Hand the child one end of a socketpair, as the parent will hand workers. */
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &ipc[1], sizeof(int));
	ck_assert_int_eq(sendmsg(sock[0], &m, 0), 1);
	close(ipc[1]);
	ck_assert_int_eq(pthread_create(&peer, NULL, ipc_peer, &ipc[0]), 0);

	ck_assert_int_eq(read(report[0], &port, sizeof(port)), sizeof(port));
	ck_assert_int_gt(port, 0);
	const char *host = loopback_name();
	fprintf(stderr, "the front fetches from http://%s:%d\n", host, port);
	for (int i = 1; i <= 3; i++) {
		char body[400];
		struct sink s = {.len = 0};
		snprintf(body, sizeof(body), "{\"id\": %d, \"host\": \"%s\", \"fetch\": \"/asset\"}",
			 i, host);
		ck_assert_int_eq(post("/rpc", body, &s), 200);
		struct json_object *res = json_tokener_parse(s.buf), *v;
		ck_assert_msg(res != NULL, "not JSON: %s", s.buf);
		ck_assert(json_object_object_get_ex(res, "id", &v));
		ck_assert_int_eq(json_object_get_int(v), i);
		ck_assert(json_object_object_get_ex(res, "fetched", &v));
		ck_assert_str_eq(json_object_get_string(v), "asset");
		ck_assert(json_object_object_get_ex(res, "resolved", &v));
		ck_assert(json_object_get_boolean(v));
		ck_assert(json_object_object_get_ex(res, "tls_failed", &v));
		ck_assert(json_object_get_boolean(v));
		ck_assert(json_object_object_get_ex(res, "census", &v));
		ck_assert_int_ge(json_object_get_int(v), 1);
		ck_assert(json_object_object_get_ex(res, "ipc", &v));
		ck_assert_str_eq(json_object_get_string(v), "pong");
		json_object_put(res);
	}
	struct sink bad = {.len = 0};
	ck_assert_int_eq(post("/rpc", "{\"id\": [", &bad), 400);

	ck_assert_int_eq(kill(pid, SIGHUP), 0);
	ck_assert_int_eq(read(report[0], &byte, 1), 1);
	ck_assert_int_eq(byte, 'h');

	struct sink bye = {.len = 0};
	ck_assert_int_eq(post("/quit", NULL, &bye), 200);
	int status = reap(pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the front's work under the filter failed (status 0x%x)", status);
	close(ipc[0]);
	pthread_join(peer, NULL);
	close(sock[0]);
	close(report[0]);
	snprintf(path, sizeof(path), "%s/log", tmpdir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	unlink(path);
	snprintf(path, sizeof(path), "%s/config", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}
END_TEST

/* ---- calls the front never makes: each kills ---------------------------------------- */

static void
do_fork(void)
{
	install_or_die();
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	_exit(3);
}

static void
do_clone_namespace(void)
{
	install_or_die();
	/* A "thread" in a new network namespace; without CLONE_SIGHAND the kernel
	 * would refuse it anyway, so a filter that let it pass shows as status 3. */
	syscall(SYS_clone, CLONE_THREAD | CLONE_NEWNET, 0, 0, 0, 0);
	_exit(3);
}

static void
do_execve(void)
{
	char *argv[] = {"true", NULL}, *envp[] = {NULL};

	install_or_die();
	execve("/bin/true", argv, envp);
	_exit(3);
}

static void
do_ptrace(void)
{
	install_or_die();
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	_exit(3);
}

static void
do_setuid(void)
{
	install_or_die();
	syscall(SYS_setresuid, -1, -1, -1);
	_exit(3);
}

static void
do_chown(void)
{
	install_or_die();
	chown("/", (uid_t)-1, (gid_t)-1);
	_exit(3);
}

static void
do_kill_parent(void)
{
	install_or_die();
	kill(getppid(), 0);
	_exit(3);
}

static void
do_kill_group(void)
{
	install_or_die();
	kill(0, 0);
	_exit(3);
}

static void
do_tgkill_other(void)
{
	install_or_die();
	syscall(SYS_tgkill, getppid(), getppid(), 0);
	_exit(3);
}

static void
do_packet_socket(void)
{
	install_or_die();
	socket(AF_PACKET, SOCK_RAW, 0);
	_exit(3);
}

static void
do_mount(void)
{
	install_or_die();
	mount("none", "/", NULL, MS_REMOUNT, NULL);
	_exit(3);
}

static void
do_unshare(void)
{
	install_or_die();
	unshare(CLONE_NEWUSER);
	_exit(3);
}

static void
do_setrlimit(void)
{
	struct rlimit r;

	install_or_die();
	getrlimit(RLIMIT_NOFILE, &r);
	setrlimit(RLIMIT_NOFILE, &r);
	_exit(3);
}

static void
do_wait(void)
{
	install_or_die();
	waitpid(-1, NULL, WNOHANG);
	_exit(3);
}

static void
do_io_uring(void)
{
	install_or_die();
	syscall(SYS_io_uring_setup, 1, NULL);
	_exit(3);
}

/* A call of another ABI (x32 numbers) would bypass a filter of native numbers. */
static void
do_other_abi(void)
{
	install_or_die();
	syscall(0x40000000 | SYS_getpid);
	_exit(3);
}

static void *
forker(void *arg)
{
	int fd = *(int *)arg;
	char b;

	/* Wait for the main thread's filter, then try to leave. */
	if (read(fd, &b, 1) != 1)
		_exit(4);
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	_exit(3);
}

/* A thread started before the filter is under it too (TSYNC). */
static void
do_fork_from_older_thread(void)
{
	int p[2];
	pthread_t t;

	if (pipe(p) != 0 || pthread_create(&t, NULL, forker, &p[0]) != 0)
		_exit(5);
	install_or_die();
	if (write(p[1], "g", 1) != 1)
		_exit(6);
	pthread_join(t, NULL);
	_exit(7);
}

static void (*const killed[])(void) = {
	do_fork,      do_clone_namespace, do_execve,	 do_ptrace,	  do_setuid,
	do_chown,     do_kill_parent,	  do_kill_group, do_tgkill_other, do_packet_socket,
	do_mount,     do_unshare,	  do_setrlimit,	 do_wait,	  do_io_uring,
	do_fork_from_older_thread, do_other_abi,
};

START_TEST(test_killed)
{
	int status = in_child(killed[_i]);

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
		      "call %d: expected death by SIGSYS, got status 0x%x", _i, status);
}
END_TEST

/* ---- what is allowed, or refused softly --------------------------------------------- */

static volatile sig_atomic_t got_usr1;

static void
on_usr1(int sig)
{
	(void)sig;
	got_usr1++;
}

static void *
nothing(void *arg)
{
	return arg;
}

static void
allowed_child(void)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	char line[256];
	int seccomp = -1, nnp = -1, sv[2];

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	install_or_die();
	FILE *f = fopen("/proc/self/status", "r");
	EXPECT(1, f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		sscanf(line, "Seccomp: %d", &seccomp);
		sscanf(line, "NoNewPrivs: %d", &nnp);
	}
	fclose(f);
	EXPECT(2, seccomp == 2 && nnp == 1);
	/* Libraries' probes: refused, not fatal. */
	EXPECT(3, socket(AF_NETLINK, SOCK_RAW, 0) == -1 && errno == EPERM);
	EXPECT(4, syscall(SYS_clone3, NULL, 0) == -1 && errno == ENOSYS);
	/* Signals to itself. */
	EXPECT(5, raise(SIGUSR1) == 0 && got_usr1 == 1);
	EXPECT(6, kill(getpid(), SIGUSR1) == 0 && got_usr1 == 2);
	/* Sockets of the families it uses. */
	int s4 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int su = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	EXPECT(7, s4 >= 0 && s6 >= 0 && su >= 0);
	EXPECT(8, socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	/* Its own limits, read only; its name. */
	struct rlimit r;
	EXPECT(9, getrlimit(RLIMIT_NOFILE, &r) == 0);
	EXPECT(10, pthread_setname_np(pthread_self(), "front") == 0);
	uid_t ru, eu, saved;
	EXPECT(13, getresuid(&ru, &eu, &saved) == 0 && ru == getuid());
	/* A thread. */
	pthread_t t;
	EXPECT(11, pthread_create(&t, NULL, nothing, NULL) == 0);
	EXPECT(12, pthread_join(t, NULL) == 0);
	_exit(0);
}

START_TEST(test_allowed)
{
	int status = in_child(allowed_child);

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "allowed calls: status 0x%x", status);
}
END_TEST

/* Every rule compiles; the exported filter kills by default. */
START_TEST(test_export)
{
	char path[] = "/tmp/test_front_filter_pfc.XXXXXX", buf[65536];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(front_filter_export(fd), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	close(fd);
	ck_assert_ptr_nonnull(strstr(buf, "action KILL_PROCESS;"));
	ck_assert_ptr_nonnull(strstr(buf, "action ERRNO(38);")); /* clone3: ENOSYS */
	ck_assert_ptr_nonnull(strstr(buf, "action ERRNO(1);"));	/* AF_NETLINK: EPERM */
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("front_filter");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_export);
	tcase_add_test(tc, test_allowed);
	tcase_add_loop_test(tc, test_killed, 0, (int)(sizeof(killed) / sizeof(killed[0])));
	tcase_add_test(tc, test_front_work);
	tcase_add_test(tc, test_front_publishes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
