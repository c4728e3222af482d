/* test_curl_req.c - the one libcurl request against a loopback server. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "curl_req.h"

/* One answer: a body of `len` 'x's, with or without a Content-Length. */
struct server {
	int lfd;
	int port;
	size_t len;
	int chunked;	  /* no Content-Length: only the collector can see the size */
	char request[4096]; /* what came, for the checks */
};

static void *
serve(void *arg)
{
	struct server *s = arg;
	int fd = accept(s->lfd, NULL, NULL);
	size_t got = 0;

	while (fd != -1 && got < sizeof(s->request) - 1 && strstr(s->request, "\r\n\r\n") == NULL) {
		ssize_t n = read(fd, s->request + got, sizeof(s->request) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		s->request[got] = '\0';
	}
	char head[256];
	if (s->chunked)
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
	else
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 s->len);
	(void)!write(fd, head, strlen(head));
	char *body = malloc(s->len + 1);
	memset(body, 'x', s->len);
	(void)!write(fd, body, s->len);
	free(body);
	close(fd);
	return NULL;
}

static pthread_t
start(struct server *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	pthread_t t;

	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ne(s->lfd, -1);
	ck_assert_int_eq(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(s->lfd, 1), 0);
	getsockname(s->lfd, (struct sockaddr *)&a, &al);
	s->port = ntohs(a.sin_port);
	pthread_create(&t, NULL, serve, s);
	return t;
}

/* Fetch from s with a bound of `max`; the result of curl_req_perform. */
static int
fetch(struct server *s, size_t max, struct buf *b, struct curl_res *res, char *why, size_t len)
{
	char url[64];
	pthread_t t = start(s);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", s->port);
	struct curl_req r = {.url = url, .protocols = "http", .timeout_s = 10, .no_proxy = 1,
			     .max_answer = max};
	int rc = curl_req_perform(&r, b, res, why, len);
	pthread_join(t, NULL);
	close(s->lfd);
	return rc;
}

START_TEST(within_bound)
{
	struct server s = {.len = 16};
	struct buf b;
	struct curl_res res;
	char why[256] = "";

	buf_init(&b);
	ck_assert_int_eq(fetch(&s, 16, &b, &res, why, sizeof(why)), 0);
	ck_assert_int_eq(res.status, 200);
	ck_assert_int_eq(res.too_big, 0);
	ck_assert_uint_eq(b.len, 16);
	ck_assert_str_eq(b.data, "xxxxxxxxxxxxxxxx");
	ck_assert(strstr(s.request, "User-Agent: codeexecd/") != NULL);
	ck_assert(strncmp(s.request, "GET /x ", 7) == 0);
	buf_free(&b);
}
END_TEST

/* Over the bound, declared or not: refused, and the error names the limit. */
START_TEST(over_bound_refused)
{
	for (int chunked = 0; chunked < 2; chunked++) {
		struct server s = {.len = 100000, .chunked = chunked};
		struct buf b;
		struct curl_res res;
		char why[256] = "";

		buf_init(&b);
		ck_assert_int_eq(fetch(&s, 1000, &b, &res, why, sizeof(why)), -1);
		ck_assert_int_eq(res.too_big, 1);
		ck_assert_str_eq(why, "answer over 1000 bytes, refused");
		ck_assert_uint_le(b.len, 1000);
		buf_free(&b);
	}
}
END_TEST

/* A protocol the caller did not name is refused before anything is sent. */
START_TEST(protocols_kept)
{
	struct curl_req r = {.url = "http://127.0.0.1:1/", .protocols = "https", .max_answer = 10};
	struct curl_res res;
	struct buf b;
	char why[256] = "";

	buf_init(&b);
	ck_assert_int_eq(curl_req_perform(&r, &b, &res, why, sizeof(why)), -1);
	ck_assert_int_eq(res.code, CURLE_UNSUPPORTED_PROTOCOL);
	ck_assert_int_eq(res.too_big, 0);
	ck_assert(why[0] != '\0');
	buf_free(&b);
}
END_TEST

int
main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	Suite *s = suite_create("curl_req");
	TCase *tc = tcase_create("curl_req");
	tcase_add_test(tc, within_bound);
	tcase_add_test(tc, over_bound_refused);
	tcase_add_test(tc, protocols_kept);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	curl_global_cleanup();
	return failed ? 1 : 0;
}
