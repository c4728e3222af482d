/*
 * test_jupyter.c - the Jupyter wire protocol: signing, every rejection of
 * the parser, frames recorded from a real ipykernel (tests/unit/data, made by
 * tests/unit/data/record.py), send/receive over ZeroMQ, and ANSI stripping.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <zmq.h>

#include "buf.h"
#include "jupyter.h"

#define KEY "0123456789abcdef0123456789abcdef"

/* One recorded message: its key and frames, decoded. */
struct recorded {
	char *key;
	size_t n;
	struct jupyter_frame f[16];
};

/* Decode base64 `b64`; the caller frees the result. */
static unsigned char *
b64_decode(const char *b64, size_t *len)
{
	size_t inlen = strlen(b64);
	unsigned char *out = malloc(inlen / 4 * 3 + 1);
	ck_assert_ptr_nonnull(out);
	int n = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)inlen);
	ck_assert_int_ge(n, 0);
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	while (inlen > 0 && b64[inlen - 1] == '=') {
		inlen--;
		n--;
	}
	*len = (size_t)n;
	return out;
}

/* Load tests/unit/data/<name>.json, found through $top_srcdir. */
static void
load(const char *name, struct recorded *r)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	struct json_object *o, *frames;

	snprintf(path, sizeof(path), "%s/tests/unit/data/%s.json", top ? top : "../..", name);
	o = json_object_from_file(path);
	if (o == NULL) { /* run by hand from the source tree's tests/ directory */
		snprintf(path, sizeof(path), "unit/data/%s.json", name);
		o = json_object_from_file(path);
	}
	ck_assert_msg(o != NULL, "cannot read %s", path);
	r->key = strdup(json_object_get_string(json_object_object_get(o, "key")));
	frames = json_object_object_get(o, "frames");
	r->n = json_object_array_length(frames);
	ck_assert_uint_le(r->n, 16);
	for (size_t i = 0; i < r->n; i++) {
		const char *b64 = json_object_get_string(json_object_array_get_idx(frames, i));
		r->f[i].data = b64_decode(b64, &r->f[i].len);
	}
	json_object_put(o);
}

static void
unload(struct recorded *r)
{
	free(r->key);
	for (size_t i = 0; i < r->n; i++)
		free((void *)r->f[i].data);
}

/* Parse recorded message `name` with its own key and expect msg_type. */
static void
parse_recorded(const char *name, const char *msg_type, struct jupyter_msg *m)
{
	struct recorded r;
	char err[ERR_LEN] = "";

	load(name, &r);
	struct jupyter_signer *s = jupyter_signer_new(r.key, strlen(r.key));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(jupyter_parse(s, r.f, r.n, m, err, sizeof(err)), JUPYTER_OK);
	ck_assert_str_eq(m->msg_type, msg_type);
	jupyter_signer_free(&s);
	ck_assert_ptr_null(s);
	unload(&r);
}

/* Content member `key` of m as a string. */
static const char *
cstr(struct jupyter_msg *m, const char *key)
{
	return json_object_get_string(json_object_object_get(m->content, key));
}

START_TEST(sign_verify_roundtrip)
{
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));
	struct jupyter_session sess;
	struct jupyter_frame f[6];
	struct jupyter_msg m;
	char id[JUPYTER_MSG_ID_MAX];
	char err[ERR_LEN] = "";

	jupyter_session_init(&sess, s);
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "code", json_object_new_string("print('hé')"));
	ck_assert_int_eq(jupyter_build(&sess, "execute_request", c, f, id), 0);
	ck_assert_uint_eq(f[1].len, JUPYTER_SIG_HEX);
	ck_assert_int_eq(jupyter_verify(s, f[1].data, f[1].len, f + 2), 1);
	ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_OK);
	ck_assert_str_eq(m.msg_type, "execute_request");
	ck_assert_str_eq(cstr(&m, "code"), "print('hé')");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(m.header, "msg_id")), id);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(m.header, "version")),
			 "5.3");
	ck_assert_ptr_null(m.parent_msg_id);
	ck_assert_uint_eq(m.nbuffers, 0);
	jupyter_msg_clear(&m);
	jupyter_msg_clear(&m);

	/* A second message gets a different id. */
	char id2[JUPYTER_MSG_ID_MAX];
	struct jupyter_frame g[6];
	ck_assert_int_eq(jupyter_build(&sess, "kernel_info_request", NULL, g, id2), 0);
	ck_assert_str_ne(id, id2);
	jupyter_frames_free(g, 6);
	jupyter_frames_free(f, 6);
	json_object_put(c);
	jupyter_signer_free(&s);
}
END_TEST

/* Build a signed message with `key`; caller frees with jupyter_frames_free. */
static void
build_with(const char *key, struct jupyter_frame f[6])
{
	struct jupyter_signer *s = jupyter_signer_new(key, strlen(key));
	struct jupyter_session sess;
	char id[JUPYTER_MSG_ID_MAX];

	jupyter_session_init(&sess, s);
	ck_assert_int_eq(jupyter_build(&sess, "status", NULL, f, id), 0);
	jupyter_signer_free(&s);
}

START_TEST(wrong_key_rejected)
{
	struct jupyter_frame f[6];
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));

	build_with("another key", f);
	ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_EBADSIG);
	ck_assert_str_eq(err, "bad signature");
	ck_assert_ptr_null(m.header);
	jupyter_frames_free(f, 6);
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(tampered_frame_rejected)
{
	struct jupyter_frame f[6];
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));

	/* Change one byte of each signed frame, and of the signature, in turn. */
	for (int i = 1; i < 6; i++) {
		build_with(KEY, f);
		char *p = (char *)f[i].data;
		p[f[i].len - 1] ^= 1;
		ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_EBADSIG);
		jupyter_frames_free(f, 6);
	}
	/* Truncated signature and unsigned message. */
	build_with(KEY, f);
	f[1].len = 10;
	ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_EBADSIG);
	f[1].len = 0;
	ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_EBADSIG);
	ck_assert_str_eq(err, "unsigned message");
	jupyter_frames_free(f, 6);
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(uppercase_signature_accepted)
{
	struct jupyter_frame f[6];
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));

	build_with(KEY, f);
	for (char *p = (char *)f[1].data; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_OK);
	jupyter_msg_clear(&m);
	jupyter_frames_free(f, 6);
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(missing_delimiter_rejected)
{
	struct jupyter_frame f[6];
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));

	build_with(KEY, f);
	/* Without the delimiter, and with too few frames after it. */
	ck_assert_int_eq(jupyter_parse(s, f + 1, 5, &m, err, sizeof(err)), JUPYTER_EMALFORMED);
	ck_assert_str_eq(err, "no <IDS|MSG> delimiter");
	ck_assert_int_eq(jupyter_parse(s, f, 5, &m, err, sizeof(err)), JUPYTER_EMALFORMED);
	ck_assert_int_eq(jupyter_parse(s, f, 0, &m, err, sizeof(err)), JUPYTER_EMALFORMED);
	jupyter_frames_free(f, 6);
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(signed_garbage_rejected)
{
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	char sig[JUPYTER_SIG_HEX + 1];
	const char *cases[][4] = {
		{"[1]", "{}", "{}", "{}"},			  /* header not an object */
		{"{}", "{}", "{}", "{}"},			  /* no msg_type */
		{"{\"msg_type\": 3}", "{}", "{}", "{}"},	  /* msg_type not a string */
		{"{\"msg_type\": \"x\"}", "{}", "{} x", "{}"}, /* trailing garbage */
		{"{\"msg_type\": \"x\"}", "{", "{}", "{}"},	  /* truncated JSON */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct jupyter_frame f[6] = {{JUPYTER_DELIM, strlen(JUPYTER_DELIM)}};
		for (int i = 0; i < 4; i++)
			f[2 + i] = (struct jupyter_frame){cases[c][i], strlen(cases[c][i])};
		ck_assert_int_eq(jupyter_sign(s, f + 2, sig), 0);
		f[1] = (struct jupyter_frame){sig, JUPYTER_SIG_HEX};
		ck_assert_int_eq(jupyter_parse(s, f, 6, &m, err, sizeof(err)), JUPYTER_EMALFORMED);
		ck_assert_ptr_null(m.header);
	}
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(identities_and_buffers)
{
	struct jupyter_frame built[6], f[10];
	struct jupyter_msg m;
	char err[ERR_LEN] = "";
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));

	/* Routing identities before the delimiter, binary buffers after content. */
	build_with(KEY, built);
	f[0] = (struct jupyter_frame){"id-1", 4};
	f[1] = (struct jupyter_frame){"<IDS|MSG", 8}; /* looks like, is not, the delimiter */
	for (int i = 0; i < 6; i++)
		f[2 + i] = built[i];
	f[8] = (struct jupyter_frame){"\0\1\2", 3};
	f[9] = (struct jupyter_frame){"", 0};
	ck_assert_int_eq(jupyter_parse(s, f, 10, &m, err, sizeof(err)), JUPYTER_OK);
	ck_assert_str_eq(m.msg_type, "status");
	ck_assert_uint_eq(m.nbuffers, 2);
	jupyter_msg_clear(&m);
	jupyter_frames_free(built, 6);
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(recorded_kernel_info_reply)
{
	struct jupyter_msg m;

	parse_recorded("kernel_info_reply", "kernel_info_reply", &m);
	struct json_object *li = json_object_object_get(m.content, "language_info");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(li, "name")), "python");
	ck_assert_str_eq(cstr(&m, "status"), "ok");
	ck_assert_ptr_nonnull(m.parent_msg_id);
	jupyter_msg_clear(&m);
}
END_TEST

START_TEST(recorded_stream)
{
	struct jupyter_msg m;

	parse_recorded("stream", "stream", &m);
	ck_assert_str_eq(cstr(&m, "name"), "stdout");
	ck_assert_str_eq(cstr(&m, "text"), "hello, world\n");
	ck_assert_ptr_nonnull(m.parent_msg_id);
	jupyter_msg_clear(&m);

	parse_recorded("status_idle", "status", &m);
	ck_assert_str_eq(cstr(&m, "execution_state"), "idle");
	jupyter_msg_clear(&m);

	parse_recorded("execute_reply_ok", "execute_reply", &m);
	ck_assert_str_eq(cstr(&m, "status"), "ok");
	jupyter_msg_clear(&m);
}
END_TEST

START_TEST(recorded_execute_result)
{
	struct jupyter_msg m;

	parse_recorded("execute_result", "execute_result", &m);
	struct json_object *data = json_object_object_get(m.content, "data");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(data, "text/plain")), "2");
	jupyter_msg_clear(&m);
}
END_TEST

START_TEST(recorded_display_data)
{
	struct jupyter_msg m;

	parse_recorded("display_data", "display_data", &m);
	struct json_object *data = json_object_object_get(m.content, "data");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(data, "text/html")),
			 "<b>hi</b>");
	jupyter_msg_clear(&m);
}
END_TEST

START_TEST(recorded_error_traceback)
{
	struct jupyter_msg m;
	struct buf tb;

	parse_recorded("error", "error", &m);
	ck_assert_str_eq(cstr(&m, "ename"), "ZeroDivisionError");
	ck_assert_str_eq(cstr(&m, "evalue"), "division by zero");
	struct json_object *lines = json_object_object_get(m.content, "traceback");
	ck_assert_uint_gt(json_object_array_length(lines), 1);
	buf_init(&tb);
	for (size_t i = 0; i < json_object_array_length(lines); i++) {
		buf_adds(&tb, json_object_get_string(json_object_array_get_idx(lines, i)));
		buf_adds(&tb, "\n");
	}
	ck_assert_ptr_nonnull(strchr(tb.data, '\033'));
	tb.len = jupyter_strip_ansi(tb.data);
	ck_assert_ptr_null(strchr(tb.data, '\033'));
	ck_assert_ptr_nonnull(strstr(tb.data, "ZeroDivisionError: division by zero"));
	ck_assert_ptr_nonnull(strstr(tb.data, "----> 1 1/0"));
	ck_assert_uint_eq(tb.len, strlen(tb.data));
	buf_free(&tb);
	jupyter_msg_clear(&m);

	parse_recorded("execute_reply_error", "execute_reply", &m);
	ck_assert_str_eq(cstr(&m, "status"), "error");
	jupyter_msg_clear(&m);
}
END_TEST

START_TEST(recorded_with_wrong_key_rejected)
{
	static const char *names[] = {"kernel_info_reply", "stream", "execute_result", "error",
				      "display_data"};
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));
	struct jupyter_msg m;
	char err[ERR_LEN] = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct recorded r;
		load(names[i], &r);
		ck_assert_int_eq(jupyter_parse(s, r.f, r.n, &m, err, sizeof(err)),
				 JUPYTER_EBADSIG);
		unload(&r);
	}
	jupyter_signer_free(&s);
}
END_TEST

START_TEST(zmq_send_recv)
{
	void *ctx = zmq_ctx_new();
	void *a = zmq_socket(ctx, ZMQ_DEALER), *b = zmq_socket(ctx, ZMQ_DEALER);
	struct jupyter_signer *s = jupyter_signer_new(KEY, strlen(KEY));
	struct jupyter_session sess;
	struct jupyter_msg m;
	char id[JUPYTER_MSG_ID_MAX];
	char err[ERR_LEN] = "";

	ck_assert_int_eq(zmq_bind(a, "inproc://t"), 0);
	ck_assert_int_eq(zmq_connect(b, "inproc://t"), 0);
	jupyter_session_init(&sess, s);
	ck_assert_int_eq(jupyter_recv(a, s, &m, err, sizeof(err)), JUPYTER_EIO);
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "n", json_object_new_int(7));
	ck_assert_int_eq(jupyter_send(b, &sess, "comm_msg", c, id), 0);
	zmq_pollitem_t it = {a, 0, ZMQ_POLLIN, 0};
	ck_assert_int_eq(zmq_poll(&it, 1, 2000), 1);
	ck_assert_int_eq(jupyter_recv(a, s, &m, err, sizeof(err)), JUPYTER_OK);
	ck_assert_str_eq(m.msg_type, "comm_msg");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(m.content, "n")), 7);
	jupyter_msg_clear(&m);
	json_object_put(c);
	jupyter_signer_free(&s);
	zmq_close(a);
	zmq_close(b);
	zmq_ctx_term(ctx);
}
END_TEST

/* Strip a copy of `in` and compare with `want`. */
static void
strip_eq(const char *in, const char *want)
{
	char *s = strdup(in);
	ck_assert_uint_eq(jupyter_strip_ansi(s), strlen(want));
	ck_assert_str_eq(s, want);
	free(s);
}

START_TEST(ansi_strip)
{
	strip_eq("", "");
	strip_eq("plain text\n", "plain text\n");
	strip_eq("\033[0;31mred\033[0m", "red");
	strip_eq("\033[38;5;241m1\033[39m/\033[38;5;241m0\033[39m", "1/0");
	strip_eq("\033]0;title\007after", "after");
	strip_eq("\033]8;;http://x\033\\link\033]8;;\033\\", "link");
	strip_eq("\033(Bx\033=y", "xy");
	strip_eq("\033[?25lhidden cursor\033[?25h", "hidden cursor");
	strip_eq("100%\r\033[2K\033[1A done", "100%\r done");
	strip_eq("h\xc3\xa9\033[1m\xe2\x86\x92", "h\xc3\xa9\xe2\x86\x92");
	/* Truncated sequences at the end are dropped, never read past. */
	strip_eq("abc\033[", "abc");
	strip_eq("abc\033[12;3", "abc");
	strip_eq("abc\033", "abc");
	strip_eq("abc\033]0;t", "abc");
	strip_eq("abc\033(", "abc");
}
END_TEST

static Suite *
jupyter_suite(void)
{
	Suite *s = suite_create("jupyter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sign_verify_roundtrip);
	tcase_add_test(tc, wrong_key_rejected);
	tcase_add_test(tc, tampered_frame_rejected);
	tcase_add_test(tc, uppercase_signature_accepted);
	tcase_add_test(tc, missing_delimiter_rejected);
	tcase_add_test(tc, signed_garbage_rejected);
	tcase_add_test(tc, identities_and_buffers);
	tcase_add_test(tc, recorded_kernel_info_reply);
	tcase_add_test(tc, recorded_stream);
	tcase_add_test(tc, recorded_execute_result);
	tcase_add_test(tc, recorded_display_data);
	tcase_add_test(tc, recorded_error_traceback);
	tcase_add_test(tc, recorded_with_wrong_key_rejected);
	tcase_add_test(tc, zmq_send_recv);
	tcase_add_test(tc, ansi_strip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(jupyter_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
