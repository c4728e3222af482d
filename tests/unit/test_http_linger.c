/*
 * test_http_linger.c - the lingering close (http_linger.c) on a socket
 * pair: it ends its side at once, reads until the peer closes, and stops
 * at the size bound or the time bound while the peer still sends.
 */
#include "autoconf.h"

#include <check.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "http_linger.h"

/* The client's side: send `total` bytes in `piece`s, one per `pause_us`. */
struct sender {
	int fd;
	long total;
	size_t piece;
	useconds_t pause_us;
};

static void *
send_all(void *arg)
{
	struct sender *s = arg;
	char buf[65536];

	memset(buf, 'x', sizeof(buf));
	for (long sent = 0; sent < s->total;) {
		ssize_t n = send(s->fd, buf, s->piece, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		sent += n;
		usleep(s->pause_us);
	}
	close(s->fd);
	return NULL;
}

/* Linger on one end while a thread sends as `s` says on the other. */
static void
linger_against(struct sender *s, int max_s, long max_bytes, struct http_linger_result *r)
{
	int sv[2];
	pthread_t t;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	s->fd = sv[1];
	pthread_create(&t, NULL, send_all, s);
	http_linger(sv[0], max_s, max_bytes, r);
	close(sv[0]); /* the sender's next send fails, and it ends */
	pthread_join(t, NULL);
}

START_TEST(reads_until_the_client_closes)
{
	struct sender s = {.total = 3 << 20, .piece = 65536};
	struct http_linger_result r;

	linger_against(&s, 10, 64 << 20, &r);
	ck_assert_int_eq(r.end, HTTP_LINGER_CLOSED);
	ck_assert_int_eq(r.bytes, 3 << 20);
}
END_TEST

START_TEST(ends_its_side_first)
{
	int sv[2];
	char c;
	struct http_linger_result r;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(shutdown(sv[1], SHUT_WR), 0); /* so that the linger ends at once */
	http_linger(sv[0], 10, 1024, &r);
	ck_assert_int_eq(r.end, HTTP_LINGER_CLOSED);
	ck_assert_int_eq(recv(sv[1], &c, 1, MSG_DONTWAIT), 0); /* the client sees the FIN */
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(stops_at_the_size_bound)
{
	struct sender s = {.total = 1L << 40, .piece = 65536};
	struct http_linger_result r;

	linger_against(&s, 60, 5 << 20, &r);
	ck_assert_int_eq(r.end, HTTP_LINGER_BYTES);
	ck_assert_int_eq(r.bytes, 5 << 20);
}
END_TEST

START_TEST(stops_at_the_time_bound)
{
	struct sender s = {.total = 1L << 40, .piece = 100, .pause_us = 10000};
	struct http_linger_result r;
	double start = clock_mono();

	linger_against(&s, 1, 1L << 30, &r);
	ck_assert_int_eq(r.end, HTTP_LINGER_TIME);
	ck_assert(r.bytes > 0);
	ck_assert(r.seconds >= 1.0 && clock_mono() - start < 5.0);
}
END_TEST

START_TEST(a_zero_bound_reads_nothing)
{
	struct sender s = {.total = 1L << 40, .piece = 65536};
	struct http_linger_result r;

	linger_against(&s, 10, 0, &r);
	ck_assert_int_eq(r.end, HTTP_LINGER_BYTES);
	ck_assert_int_eq(r.bytes, 0);
}
END_TEST

START_TEST(a_socket_that_is_none_is_an_error)
{
	int fds[2];
	struct http_linger_result r;

	ck_assert_int_eq(pipe(fds), 0);
	close(fds[1]);
	http_linger(fds[0], 1, 1024, &r); /* recv on a pipe: ENOTSOCK */
	ck_assert_int_eq(r.end, HTTP_LINGER_ERROR);
	ck_assert_int_ne(r.err, 0);
	close(fds[0]);
}
END_TEST

static Suite *
linger_suite(void)
{
	Suite *s = suite_create("http_linger");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reads_until_the_client_closes);
	tcase_add_test(tc, ends_its_side_first);
	tcase_add_test(tc, stops_at_the_size_bound);
	tcase_add_test(tc, stops_at_the_time_bound);
	tcase_add_test(tc, a_zero_bound_reads_nothing);
	tcase_add_test(tc, a_socket_that_is_none_is_an_error);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(linger_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
