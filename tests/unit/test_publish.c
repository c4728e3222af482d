/*
 * test_publish.c - the publishers without a daemon: the prefix's
 * expansion, the local copy (bytes, sha256, max_bytes, a planted link not
 * followed), and the azure_blob requests a managed identity makes, against
 * a loopback server that records them: the token from the instance metadata
 * endpoint (with "Metadata: true"), then a Put Blob with that token as
 * Bearer, x-ms-version and Content-MD5.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "fs_tree.h"
#include "publish.h"
#include "xmalloc.h"

static struct config_publisher
publisher(const char *type, const char *base_dir)
{
	struct config_publisher p = {
		.name = "t", .type = (char *)type, .base_dir = (char *)base_dir,
		.account_url = "", .container = "", .sas_token_file = "", .account_key_file = "",
		.max_bytes = 1000, .prefix = "{identity}/{session}", .content_type = "",
	};
	return p;
}

/* A file holding `data`, opened for reading; its path in tmpl (mkstemp). */
static int
file_with(char *tmpl, const char *data)
{
	int fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	return fd;
}

START_TEST(path_expands_prefix)
{
	struct config_publisher p = publisher("local", "/x");
	struct publish_src src = {-1, "plots/a.png", "image/png", "../eve/x", "s1"};

	char *path = publish_path(&p, &src);
	ck_assert_str_eq(path, ".._eve_x/s1/plots/a.png");
	free(path);
	src.identity = "..";
	path = publish_path(&p, &src);
	ck_assert_str_eq(path, "_/s1/plots/a.png");
	free(path);
	p.prefix = "";
	path = publish_path(&p, &src);
	ck_assert_str_eq(path, "plots/a.png");
	free(path);
}
END_TEST

START_TEST(local_copies_and_refuses)
{
	char dir[] = "/tmp/test_publish.XXXXXX", src_path[] = "/tmp/test_publish_src.XXXXXX";
	char why[ERR_LEN];
	struct publish_out out;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *base = xasprintf("%s/base/deeper", dir);
	struct config_publisher p = publisher("local", base);
	int fd = file_with(src_path, "hello\n");
	struct publish_src src = {fd, "sub/h.txt", "text/plain", "me", "s1"};

	ck_assert_int_eq(publish(&p, &src, &out, why, sizeof(why)), 0);
	char *copy = xasprintf("%s/me/s1/sub/h.txt", base);
	char *uri = xasprintf("file://%s", copy);
	ck_assert_str_eq(out.uri, uri);
	ck_assert_uint_eq(out.size, 6);
	/* sha256 of "hello\n" */
	ck_assert_str_eq(out.sha256,
			 "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
	struct stat st;
	ck_assert_int_eq(stat(base, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0750);
	free(out.uri);

	/* A link planted where a directory goes is not followed. */
	char *evil = xasprintf("%s/me/s2", base);
	ck_assert_int_eq(symlink(dir, evil), 0);
	src.session = "s2";
	ck_assert_int_eq(publish(&p, &src, &out, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "Too many levels") || strstr(why, "Not a directory"), "%s", why);

	/* Over max_bytes. */
	p.max_bytes = 3;
	src.session = "s1";
	ck_assert_int_eq(publish(&p, &src, &out, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "max_bytes") != NULL, "%s", why);

	close(fd);
	unlink(src_path);
	fs_remove_tree(dir);
	free(evil);
	free(copy);
	free(uri);
	free(base);
}
END_TEST

/* The loopback server: answers `n` requests, keeping each one's text. */
struct server {
	int lfd, n;
	struct buf seen[4];
};

/* Read one request (headers and Content-Length body) from fd into b. */
static void
read_request(int fd, struct buf *b)
{
	char chunk[4096];
	char *end = NULL;

	while (end == NULL) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n <= 0)
			return;
		buf_add(b, chunk, (size_t)n);
		buf_add(b, "", 1);
		b->len--;
		end = strstr(b->data, "\r\n\r\n");
	}
	const char *cl = strcasestr(b->data, "Content-Length:");
	size_t want = cl ? (size_t)atol(cl + 15) : 0;
	size_t have = b->len - (size_t)(end + 4 - b->data);
	while (have < want) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n <= 0)
			return;
		buf_add(b, chunk, (size_t)n);
		have += (size_t)n;
	}
	buf_add(b, "", 1);
}

static void *
serve(void *arg)
{
	struct server *s = arg;
	static const char token[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				    "Content-Length: 43\r\nConnection: close\r\n\r\n"
				    "{\"access_token\":\"tok-123\",\"expires_in\":\"1\"}";
	static const char created[] = "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n"
				      "Connection: close\r\n\r\n";

	for (int i = 0; i < s->n; i++) {
		int fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			break;
		buf_init(&s->seen[i]);
		read_request(fd, &s->seen[i]);
		const char *a = strncmp(s->seen[i].data, "GET /metadata", 13) == 0 ? token : created;
		ck_assert_int_eq(write(fd, a, strlen(a)), (ssize_t)strlen(a));
		close(fd);
	}
	return NULL;
}

START_TEST(azure_managed_identity_requests)
{
	struct server s = {.n = 2};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	pthread_t t;
	char why[ERR_LEN], src_path[] = "/tmp/test_publish_src.XXXXXX";
	struct publish_out out;

	s.lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(s.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s.lfd, 4), 0);
	ck_assert_int_eq(getsockname(s.lfd, (struct sockaddr *)&sa, &len), 0);
	char *base = xasprintf("http://127.0.0.1:%d", ntohs(sa.sin_port));
	char *acct = xasprintf("%s/acct", base);
	publish_azure_imds_base(base);
	pthread_create(&t, NULL, serve, &s);

	struct config_publisher p = publisher("azure_blob", "");
	p.account_url = acct;
	p.container = "c";
	p.managed_identity = 1;
	int fd = file_with(src_path, "a,b\n");
	struct publish_src src = {fd, "f.csv", "text/csv", "id", "s1"};
	int rc = publish(&p, &src, &out, why, sizeof(why));
	ck_assert_msg(rc == 0, "%s", why);
	pthread_join(t, NULL);

	const char *imds = s.seen[0].data, *put = s.seen[1].data;
	static const char imds_line[] = "GET /metadata/identity/oauth2/token?api-version=2018-02-01"
					"&resource=https%3A%2F%2Fstorage.azure.com%2F HTTP/1.1\r\n";
	ck_assert_msg(strncmp(imds, imds_line, strlen(imds_line)) == 0, "%s", imds);
	ck_assert_msg(strstr(imds, "\r\nMetadata: true\r\n") != NULL, "%s", imds);
	ck_assert_msg(strncmp(put, "PUT /acct/c/id/s1/f.csv HTTP/1.1\r\n", 34) == 0, "%s", put);
	ck_assert_msg(strstr(put, "\r\nAuthorization: Bearer tok-123\r\n") != NULL, "%s", put);
	ck_assert_msg(strstr(put, "\r\nx-ms-version:2021-08-06\r\n") != NULL ||
			      strstr(put, "\r\nx-ms-version: 2021-08-06\r\n") != NULL, "%s", put);
	ck_assert_msg(strstr(put, "x-ms-blob-type: BlockBlob") ||
			      strstr(put, "x-ms-blob-type:BlockBlob"), "%s", put);
	ck_assert_msg(strstr(put, "\r\nContent-MD5: ") != NULL, "%s", put);
	ck_assert_msg(strstr(put, "\r\nContent-Type: text/csv\r\n") != NULL, "%s", put);
	ck_assert_msg(strstr(out.uri, "/acct/c/id/s1/f.csv") != NULL, "%s", out.uri);
	free(out.uri);
	for (int i = 0; i < 2; i++)
		buf_free(&s.seen[i]);
	publish_azure_imds_base(NULL);
	close(s.lfd);
	close(fd);
	unlink(src_path);
	free(acct);
	free(base);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("publish");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, path_expands_prefix);
	tcase_add_test(tc, local_copies_and_refuses);
	tcase_add_test(tc, azure_managed_identity_requests);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
