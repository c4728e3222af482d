/* test_ipc.c - frame round trips and every rejection of the IPC decoder. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc.h"

/* Build one frame of `type` with payload {"k": "v"}. */
static void
make_frame(struct buf *b, unsigned type, uint32_t id)
{
	char err[ERR_LEN] = "";
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "k", json_object_new_string("v"));
	ck_assert_int_eq(ipc_frame(b, type, id, o, err, sizeof(err)), 0);
	json_object_put(o);
}

/*
 * A descriptor passed with a frame comes out with that frame, not with the
 * frames before or after it in the same read; two at once are refused.
 */
START_TEST(descriptor_with_its_frame)
{
	int sv[2], pipefd[2];
	struct ipc_reader r;
	struct ipc_msg m;
	char err[ERR_LEN] = "";
	struct buf b;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	buf_init(&b);
	make_frame(&b, IPC_LOG, 1);
	ck_assert_int_eq(ipc_write(sv[0], b.data, b.len), 0);
	b.len = 0;
	make_frame(&b, IPC_FILE, 2);
	ck_assert_int_eq(ipc_write_fd(sv[0], b.data, b.len, pipefd[1]), 0);
	b.len = 0;
	make_frame(&b, IPC_LOG, 3);
	ck_assert_int_eq(ipc_write(sv[0], b.data, b.len), 0);

	ipc_reader_init(&r, sv[1]);
	while (r.in.len < 3 * b.len)
		ck_assert_int_gt(ipc_reader_fill(&r), 0);
	for (uint32_t id = 1; id <= 3; id++) {
		ck_assert_int_eq(ipc_reader_next(&r, &m, err, sizeof(err)), 1);
		ck_assert_uint_eq(m.hdr.id, id);
		ck_assert_int_eq(m.has_fd, id == 2);
		if (id == 2) {
			ck_assert_int_eq(write(m.fd, "x", 1), 1); /* it is the pipe's end */
			char c;
			ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
		}
		ipc_msg_clear(&m);
	}

	/* Two descriptors while the first waits for its frame: a protocol error. */
	b.len = 0;
	make_frame(&b, IPC_FILE, 4);
	ck_assert_int_eq(ipc_write_fd(sv[0], b.data, 3, pipefd[1]), 0);
	ck_assert_int_gt(ipc_reader_fill(&r), 0);
	ck_assert_int_eq(ipc_write_fd(sv[0], b.data + 3, b.len - 3, pipefd[1]), 0);
	ck_assert_int_eq(ipc_reader_fill(&r), -1);
	ck_assert_int_eq(errno, EPROTO);
	ipc_reader_free(&r);
	buf_free(&b);
	close(sv[0]);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
}
END_TEST

START_TEST(roundtrip_socketpair)
{
	int sv[2];
	struct ipc_reader r;
	struct ipc_msg m;
	char err[ERR_LEN] = "";

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "code", json_object_new_string("print(1)"));
	ck_assert_int_eq(ipc_send(sv[0], IPC_EXECUTE, 42, o), 0);
	ck_assert_int_eq(ipc_send(sv[0], IPC_SHUTDOWN, 43, NULL), 0);
	json_object_put(o);

	ipc_reader_init(&r, sv[1]);
	ck_assert_int_gt(ipc_reader_fill(&r), 0);
	ck_assert_int_eq(ipc_reader_next(&r, &m, err, sizeof(err)), 1);
	ck_assert_uint_eq(m.hdr.type, IPC_EXECUTE);
	ck_assert_uint_eq(m.hdr.id, 42);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(m.payload, "code")),
			 "print(1)");
	ipc_msg_clear(&m);
	ck_assert_int_eq(ipc_reader_next(&r, &m, err, sizeof(err)), 1);
	ck_assert_uint_eq(m.hdr.type, IPC_SHUTDOWN);
	ck_assert_ptr_null(m.payload);
	ck_assert_int_eq(ipc_reader_next(&r, &m, err, sizeof(err)), 0);
	ipc_reader_free(&r);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(truncated_frame_waits)
{
	struct buf b;
	struct ipc_msg m;
	char err[ERR_LEN] = "";

	buf_init(&b);
	make_frame(&b, IPC_RESULT, 7);
	for (size_t cut = 0; cut < b.len; cut++)
		ck_assert_int_eq(ipc_decode((unsigned char *)b.data, cut, &m, err, sizeof(err)),
				 0);
	ck_assert_int_eq(ipc_decode((unsigned char *)b.data, b.len, &m, err, sizeof(err)),
			 (ssize_t)b.len);
	ipc_msg_clear(&m);
	buf_free(&b);
}
END_TEST

/* Rewrite header field at `off` (2 or 4 bytes, big-endian) and expect -1. */
static void
expect_rejected(size_t off, size_t width, uint32_t value, const char *why)
{
	struct buf b;
	struct ipc_msg m;
	char err[ERR_LEN] = "";

	buf_init(&b);
	make_frame(&b, IPC_OUTPUT, 1);
	for (size_t i = 0; i < width; i++)
		b.data[off + i] = (char)(value >> (8 * (width - 1 - i)));
	ck_assert_int_eq(ipc_decode((unsigned char *)b.data, b.len, &m, err, sizeof(err)), -1);
	ck_assert_str_eq(err, why);
	buf_free(&b);
}

START_TEST(wrong_version)
{
	expect_rejected(0, 2, IPC_VERSION + 1, "wrong protocol version");
}
END_TEST

START_TEST(unknown_type)
{
	expect_rejected(2, 2, 999, "unknown message type");
	expect_rejected(2, 2, 0, "unknown message type");
}
END_TEST

START_TEST(oversized)
{
	expect_rejected(12, 4, IPC_MAX_PAYLOAD + 1, "oversized payload");
}
END_TEST

START_TEST(bad_payload)
{
	static const char *bad[] = {"{\"a\":", "[1,2]", "\"str\"", "{} trailing", "nul\0l"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct buf b;
		struct ipc_msg m;
		char err[ERR_LEN] = "";
		unsigned char hdr[IPC_HDR_LEN];
		size_t len = strlen(bad[i]) ? strlen(bad[i]) : 5;
		struct ipc_hdr h = {IPC_VERSION, IPC_RESULT, 0, 1, (uint32_t)len};

		buf_init(&b);
		ipc_hdr_encode(&h, hdr);
		buf_add(&b, hdr, sizeof(hdr));
		buf_add(&b, bad[i], len);
		ck_assert_int_eq(ipc_decode((unsigned char *)b.data, b.len, &m, err, sizeof(err)),
				 -1);
		ck_assert_str_eq(err, "payload is not a JSON object");
		buf_free(&b);
	}
}
END_TEST

START_TEST(type_names)
{
	ck_assert_str_eq(ipc_type_name(IPC_READY), "READY");
	ck_assert_str_eq(ipc_type_name(12345), "unknown");
	ck_assert(!ipc_type_valid(31));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ipc");
	TCase *tc = tcase_create("frames");
	tcase_add_test(tc, roundtrip_socketpair);
	tcase_add_test(tc, descriptor_with_its_frame);
	tcase_add_test(tc, truncated_frame_waits);
	tcase_add_test(tc, wrong_version);
	tcase_add_test(tc, unknown_type);
	tcase_add_test(tc, oversized);
	tcase_add_test(tc, bad_payload);
	tcase_add_test(tc, type_names);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
