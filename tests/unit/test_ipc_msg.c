/*
 * test_ipc_msg.c - the typed IPC codec: a round trip of every message, and
 * every kind of rejection (wrong type, missing field, wrong JSON type,
 * out-of-bounds value, extra junk, rules between fields).
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc_msg.h"
#include "xmalloc.h"

/* A frame of `type` whose payload is json (NULL: empty), as the reader gives it. */
static struct ipc_msg
frame_of(unsigned type, const char *json)
{
	struct ipc_msg m = {.hdr = {IPC_VERSION, (uint16_t)type, 0, 7, 0}, .payload = NULL};

	if (json) {
		m.payload = json_tokener_parse(json);
		ck_assert_msg(m.payload != NULL, "bad test JSON %s", json);
	}
	return m;
}

/*
 * Encode msg, read the frame back as the reader does, decode it into `out`,
 * encode that again: both frames must be the same bytes.
 */
static void
roundtrip(unsigned type, const void *msg, void *out)
{
	struct buf a, b;
	struct ipc_msg f;
	char err[ERR_LEN] = "";
	char derr[IPC_ERR_LEN];

	buf_init(&a);
	buf_init(&b);
	ck_assert_msg(ipc_msg_encode(&a, type, 42, msg, err, sizeof(err)) == 0, "encode %s: %s",
		      ipc_type_name(type), err);
	ck_assert_int_eq(ipc_decode((unsigned char *)a.data, a.len, &f, err, sizeof(err)),
			 (ssize_t)a.len);
	ck_assert_uint_eq(f.hdr.type, type);
	ck_assert_uint_eq(f.hdr.id, 42);
	ck_assert_msg(ipc_msg_decode(&f, type, out, derr, sizeof(derr)) == 0, "decode: %s", derr);
	ck_assert_int_eq(ipc_msg_encode(&b, type, 42, out, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert_int_eq(memcmp(a.data, b.data, a.len), 0);
	ipc_msg_clear(&f);
	buf_free(&a);
	buf_free(&b);
}

START_TEST(start_roundtrip)
{
	char *argv[] = {"/env/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}",
			NULL};
	char *env[] = {"PATH=/env/bin:/usr/bin", "EMPTY=", "EQ=a=b", NULL};
	char *mime[] = {"text/plain", "image/png", NULL};
	char *fds[] = {"MODEL_URL_SOCKET_FD=/run/sidecars/model.sock.fds", NULL};
	char *hide[] = {"/etc/codeexecd.yaml", "/state", NULL};
	struct ipc_limits lim = {256, 64, 0.5, 200, 5};
	struct cgroup_layout l = {.version = {2, 1, 0},
				  .parent = {"/sys/fs/cgroup/d/kernels", "/sys/fs/cgroup/pids/x"}};
	struct ipc_cgroup cg;
	struct ipc_cgroup_ctl ctl[CGROUP_NCTL];
	struct ipc_start in = {argv, env, "/state/sessions/ab", "/run/k-ab", mime,
			       IPC_INTERRUPT_MESSAGE, 30, NET_SECCOMP, 61000, 61001, &lim, &cg,
			       "import numpy\n0\n", fds, 1, "/run/c/egress/ab.sock", 7, hide};
	struct ipc_start out;
	struct cgroup_layout back;

	ipc_cgroup_from_layout(&cg, ctl, &l, "k-ab");
	ck_assert_ptr_null(cg.cpu);
	roundtrip(IPC_START, &in, &out);
	ck_assert_str_eq(out.argv[4], "{connection_file}");
	ck_assert_ptr_null(out.argv[5]);
	ck_assert_str_eq(out.env[2], "EQ=a=b");
	ck_assert_str_eq(out.env[1], "EMPTY=");
	ck_assert_str_eq(out.cwd, "/state/sessions/ab");
	ck_assert_str_eq(out.allow_mime[1], "image/png");
	ck_assert_int_eq(out.interrupt_mode, IPC_INTERRUPT_MESSAGE);
	ck_assert(out.startup_timeout_s == 30);
	ck_assert_int_eq(out.network_mode, NET_SECCOMP);
	ck_assert_uint_eq(out.uid, 61000);
	ck_assert_uint_eq(out.gid, 61001);
	ck_assert_uint_eq(out.limits->memory_mb, 256);
	ck_assert(out.limits->cpu == 0.5);
	ck_assert_str_eq(out.cgroup->name, "k-ab");
	ck_assert_str_eq(out.warm_code, "import numpy\n0\n");
	ck_assert_str_eq(out.unix_fds[0], "MODEL_URL_SOCKET_FD=/run/sidecars/model.sock.fds");
	ck_assert_ptr_null(out.unix_fds[1]);
	ck_assert_int_eq(out.upstreams, 1);
	ck_assert_str_eq(out.egress_socket, "/run/c/egress/ab.sock");
	ck_assert_int_eq(out.landlock_abi, 7);
	ck_assert_str_eq(out.hide_paths[1], "/state");
	ck_assert_ptr_null(out.hide_paths[2]);
	ipc_cgroup_to_layout(out.cgroup, &back);
	ck_assert_int_eq(back.version[CGROUP_MEMORY], 2);
	ck_assert_int_eq(back.version[CGROUP_PIDS], 1);
	ck_assert_int_eq(back.version[CGROUP_CPU], 0);
	ck_assert_str_eq(back.parent[CGROUP_PIDS], "/sys/fs/cgroup/pids/x");
	cgroup_layout_free(&back);
	ipc_start_free(&out);
	ck_assert_ptr_null(out.argv); /* free zeroes */
}
END_TEST

START_TEST(start_minimal_defaults)
{
	struct ipc_start st;
	char err[IPC_ERR_LEN];
	struct ipc_msg f = frame_of(IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\","
					       " \"runtime_dir\": \"/r\"}");

	ck_assert_int_eq(ipc_start_decode(&f, &st, err, sizeof(err)), 0);
	ck_assert_ptr_null(st.allow_mime); /* absent: every MIME type */
	ck_assert_ptr_nonnull(st.env);
	ck_assert_ptr_null(st.env[0]);
	ck_assert_int_eq(st.interrupt_mode, IPC_INTERRUPT_SIGNAL);
	ck_assert_int_eq(st.network_mode, NET_INHERIT);
	ck_assert_uint_eq(st.uid, 0);
	ck_assert_ptr_null(st.limits);
	ck_assert_ptr_null(st.cgroup);
	ipc_start_free(&st);
	ipc_msg_clear(&f);
}
END_TEST

START_TEST(execute_roundtrip)
{
	struct ipc_text code = {"print('a\0b')", 12};
	char *mime[] = {"text/plain", "image/png", NULL};
	struct ipc_execute in = {code, 2.5, 1, 100, 4096, 1, mime, 2048, 1, 7.5, 1}, out;

	roundtrip(IPC_EXECUTE, &in, &out);
	ck_assert_uint_eq(out.code.len, 12);
	ck_assert_int_eq(memcmp(out.code.s, "print('a\0b')", 12), 0);
	ck_assert(out.timeout_s == 2.5);
	ck_assert_int_eq(out.silent, 1);
	ck_assert_uint_eq(out.output_limit, 100);
	ck_assert_uint_eq(out.rich_limit, 4096);
	ck_assert_int_eq(out.stream, 1);
	ck_assert_str_eq(out.allow_mime[0], "text/plain");
	ck_assert_str_eq(out.allow_mime[1], "image/png");
	ck_assert_ptr_null(out.allow_mime[2]);
	ck_assert_uint_eq(out.inline_limit, 2048);
	ck_assert_int_eq(out.binary_files, 1);
	ck_assert(out.rescue_s == 7.5);
	ck_assert_int_eq(out.allow_stdin, 1);
	ipc_execute_free(&out);
}
END_TEST

START_TEST(ready_roundtrip)
{
	struct ipc_ready in = {4242, "python", 1, "3.11.2"}, out;

	roundtrip(IPC_READY, &in, &out);
	ck_assert_int_eq(out.kernel_pid, 4242);
	ck_assert_str_eq(out.language, "python");
	ck_assert_int_eq(out.restarted, 1);
	ck_assert_str_eq(out.language_version, "3.11.2");
	ipc_ready_free(&out);
	/* language_version is optional: a kernel may not say. */
	in.language_version = NULL;
	roundtrip(IPC_READY, &in, &out);
	ck_assert_ptr_null(out.language_version);
	ipc_ready_free(&out);
}
END_TEST

START_TEST(output_roundtrip)
{
	struct ipc_output in = {IPC_STDERR, {"x\0y\n", 4}}, out;

	roundtrip(IPC_OUTPUT, &in, &out);
	ck_assert_int_eq(out.name, IPC_STDERR);
	ck_assert_uint_eq(out.text.len, 4);
	ck_assert_int_eq(memcmp(out.text.s, "x\0y\n", 4), 0);
	ipc_output_free(&out);
}
END_TEST

START_TEST(streaming_roundtrip)
{
	struct ipc_streaming in = {{"a\nb\0", 5}, {"warn\n", 5}}, out, none = {{NULL, 0}, {NULL, 0}};
	struct ipc_msg f;
	char err[IPC_ERR_LEN];

	roundtrip(IPC_STREAMING, &in, &out);
	ck_assert_uint_eq(out.out.len, 5);
	ck_assert_int_eq(memcmp(out.out.s, "a\nb\0", 5), 0);
	ck_assert_str_eq(out.err.s, "warn\n");
	ipc_streaming_free(&out);
	/* Nothing printed yet: both are left out, and read back empty. */
	roundtrip(IPC_STREAMING, &none, &out);
	ck_assert_uint_eq(out.out.len, 0);
	ck_assert_uint_eq(out.err.len, 0);
	ipc_streaming_free(&out);
	f = frame_of(IPC_STREAMING, "{\"stdout\": 1}");
	ck_assert_int_eq(ipc_streaming_decode(&f, &out, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "STREAMING: stdout: must be a string");
	ipc_msg_clear(&f);
	f = frame_of(IPC_STREAMING, "{\"stdout\": \"\", \"rich\": []}");
	ck_assert_int_eq(ipc_streaming_decode(&f, &out, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "STREAMING: unknown member \"rich\"");
	ipc_msg_clear(&f);
}
END_TEST

/* A RESULT's document is the decoded frame's payload itself, moved out. */
START_TEST(result_take)
{
	struct ipc_result r;
	char err[IPC_ERR_LEN];
	struct ipc_msg f = frame_of(IPC_RESULT, "{\"success\": true, \"stdout\": \"2\\n\","
					       " \"stderr\": \"\", \"rich_outputs\": [], \"error\":"
					       " null, \"execution_time\": 0.5,"
					       " \"kernel_restarted\": false}");
	struct json_object *payload = f.payload;

	ck_assert_int_eq(ipc_result_decode(&f, &r, err, sizeof(err)), 0);
	ipc_result_free(&r);
	struct json_object *doc = ipc_result_take(&f);
	ck_assert_ptr_eq(doc, payload);
	ck_assert_ptr_null(f.payload);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(doc, "stdout")), "2\n");
	ipc_msg_clear(&f); /* owns nothing now */
	json_object_put(doc);
}
END_TEST

/* A view of a RESULT reads the frame's own strings and values, copying none. */
START_TEST(result_view)
{
	struct ipc_result r;
	char err[IPC_ERR_LEN];
	struct ipc_msg f = frame_of(IPC_RESULT, "{\"success\": false, \"stdout\": \"2\\n\","
					       " \"stderr\": \"e\", \"rich_outputs\": [{\"mime_type\":"
					       " \"application/json\", \"data\": {\"a\": 1}}],"
					       " \"error\": {\"type\": \"E\", \"message\": \"m\","
					       " \"traceback\": \"t\"}, \"execution_time\": 0.5,"
					       " \"kernel_restarted\": false, \"dropped_mime\": [\"x/y\"],"
					       " \"artifacts\": [{\"name\": \"a.csv\", \"size_bytes\": 3,"
					       " \"mime_type\": \"text/csv\", \"modified_at\": \"z\"}]}");
	struct json_object *p = f.payload;
	struct json_object *rich0 = json_object_array_get_idx(json_object_object_get(p, "rich_outputs"), 0);

	ck_assert_int_eq(ipc_msg_view(&f, IPC_RESULT, &r, err, sizeof(err)), 0);
	ck_assert_ptr_eq(r.out.s, json_object_get_string(json_object_object_get(p, "stdout")));
	ck_assert_uint_eq(r.out.len, 2);
	ck_assert_ptr_eq(r.err.s, json_object_get_string(json_object_object_get(p, "stderr")));
	ck_assert_ptr_eq(r.rich[0].data, json_object_object_get(rich0, "data"));
	ck_assert_ptr_eq(r.rich[0].mime_type,
			 json_object_get_string(json_object_object_get(rich0, "mime_type")));
	ck_assert_str_eq(r.error->message.s, "m");
	ck_assert_str_eq(r.dropped_mime[0], "x/y");
	ck_assert_ptr_null(r.dropped_mime[1]);
	ck_assert_str_eq(r.artifacts[0].name, "a.csv");
	ipc_msg_view_free(IPC_RESULT, &r);
	ck_assert_ptr_null(r.rich);
	/* The payload is untouched: it still holds everything, once. */
	ck_assert_int_eq(json_object_get_int(json_object_object_get(
				 json_object_object_get(rich0, "data"), "a")), 1);
	ipc_msg_clear(&f);
}
END_TEST

/* FILE_OPEN, FILE_WRITE, FILES and FILE: paths stay below outputs/ (below cwd for
 * FILE_WRITE, its mode within 0755), FILE is one of error and file. */
START_TEST(file_messages)
{
	char err[IPC_ERR_LEN];
	struct ipc_file_open o = {"plots/a.png"}, o2;
	struct ipc_artifact a = {"a.csv", 3, "text/csv", "2026-12-01T13:00:00Z"};
	struct ipc_files fs = {&a, 1, 0}, fs2;
	struct ipc_file f = {{NULL, 0}, &a}, f2;

	roundtrip(IPC_FILE_OPEN, &o, &o2);
	ck_assert_str_eq(o2.path, "plots/a.png");
	ipc_file_open_free(&o2);
	roundtrip(IPC_FILES, &fs, &fs2);
	ck_assert_uint_eq(fs2.n_files, 1);
	ck_assert_str_eq(fs2.files[0].mime_type, "text/csv");
	ipc_files_free(&fs2);
	roundtrip(IPC_FILE, &f, &f2);
	ck_assert_str_eq(f2.file->name, "a.csv");
	ipc_file_free(&f2);
	struct ipc_file_write w = {"data/in.csv", ipc_text_of("YSxi"), 0755}, w2;
	roundtrip(IPC_FILE_WRITE, &w, &w2);
	ck_assert_str_eq(w2.path, "data/in.csv");
	ck_assert_str_eq(w2.data.s, "YSxi");
	ck_assert_uint_eq(w2.mode, 0755);
	ipc_file_write_free(&w2);
	static const char *const bad_write[] = {
		"{\"path\": \"../x\", \"data\": \"\", \"mode\": 420}",
		"{\"path\": \"x\", \"data\": \"\", \"mode\": 2541}", /* 04755 */
		"{\"path\": \"x\", \"mode\": 420}",
	};
	for (size_t i = 0; i < sizeof(bad_write) / sizeof(bad_write[0]); i++) {
		struct ipc_msg m = frame_of(IPC_FILE_WRITE, bad_write[i]);
		ck_assert_msg(ipc_file_write_decode(&m, &w2, err, sizeof(err)) == -1, "%s",
			      bad_write[i]);
		ipc_msg_clear(&m);
	}

	static const char *const bad_open[] = {
		"{\"path\": \"../x\"}", "{\"path\": \"/etc/passwd\"}", "{\"path\": \"a//b\"}",
		"{\"path\": \"a/./b\"}", "{\"path\": \"a/\"}", "{\"path\": \"\"}", "{}",
	};
	for (size_t i = 0; i < sizeof(bad_open) / sizeof(bad_open[0]); i++) {
		struct ipc_msg m = frame_of(IPC_FILE_OPEN, bad_open[i]);
		ck_assert_msg(ipc_file_open_decode(&m, &o2, err, sizeof(err)) == -1, "%s", bad_open[i]);
		ipc_msg_clear(&m);
	}
	static const char *const bad_file[] = {
		"{}",
		"{\"error\": \"no\", \"file\": {\"name\": \"a\", \"size_bytes\": 1,"
		" \"mime_type\": \"t/t\", \"modified_at\": \"x\"}}",
		"{\"file\": {\"name\": \"../a\", \"size_bytes\": 1, \"mime_type\": \"t/t\","
		" \"modified_at\": \"x\"}}",
	};
	for (size_t i = 0; i < sizeof(bad_file) / sizeof(bad_file[0]); i++) {
		struct ipc_msg m = frame_of(IPC_FILE, bad_file[i]);
		ck_assert_msg(ipc_file_decode(&m, &f2, err, sizeof(err)) == -1, "%s", bad_file[i]);
		ipc_msg_clear(&m);
	}
}
END_TEST

START_TEST(result_roundtrip)
{
	char sha[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct ipc_rich rich[3] = {
		{"image/png", json_object_new_string("iVBORw0KGgo="), NULL, 0, NULL},
		{"application/json", json_tokener_parse("{\"a\": [1, 2]}"), NULL, 0, NULL},
		/* by reference: its file under outputs/, no data */
		{"text/html", NULL, "rich/1-ab-rich1.html", 123456, sha},
	};
	struct ipc_exec_error e = {ipc_text_of("ZeroDivisionError"),
				   ipc_text_of("division by zero"), ipc_text_of("Traceback...")};
	char *dropped[] = {"application/vnd.custom+json", NULL};
	struct ipc_artifact arts[1] = {{"plots/a.png", 42, "image/png", "2026-12-01T13:00:00Z"}};
	struct ipc_result in = {0, ipc_text_of("out\n"), ipc_text_of(""), rich, 3, &e, 0.25, 1,
				 NULL, NULL, dropped, 3, arts, 1, 1, 7, 2, 1.5};
	struct ipc_result out;

	roundtrip(IPC_RESULT, &in, &out);
	ck_assert_int_eq(out.success, 0);
	ck_assert_str_eq(out.out.s, "out\n");
	ck_assert_uint_eq(out.err.len, 0);
	ck_assert_uint_eq(out.n_rich, 3);
	ck_assert_ptr_null(out.rich[0].file);
	ck_assert_ptr_null(out.rich[2].data);
	ck_assert_str_eq(out.rich[2].file, "rich/1-ab-rich1.html");
	ck_assert_uint_eq(out.rich[2].size_bytes, 123456);
	ck_assert_str_eq(out.rich[2].sha256, sha);
	ck_assert_str_eq(out.rich[0].mime_type, "image/png");
	ck_assert_str_eq(json_object_get_string(out.rich[0].data), "iVBORw0KGgo=");
	ck_assert_int_eq(json_object_get_int(json_object_array_get_idx(
				 json_object_object_get(out.rich[1].data, "a"), 1)),
			 2);
	ck_assert_str_eq(out.error->type.s, "ZeroDivisionError");
	ck_assert(out.execution_time == 0.25);
	ck_assert_int_eq(out.kernel_restarted, 1);
	ck_assert_str_eq(out.dropped_mime[0], "application/vnd.custom+json");
	ck_assert_ptr_null(out.dropped_mime[1]);
	ck_assert_uint_eq(out.spill_files, 3);
	ck_assert_uint_eq(out.n_artifacts, 1);
	ck_assert_str_eq(out.artifacts[0].name, "plots/a.png");
	ck_assert_uint_eq(out.artifacts[0].size_bytes, 42);
	ck_assert_int_eq(out.artifacts_truncated, 1);
	ck_assert_uint_eq(out.out_streamed, 7);
	ck_assert_uint_eq(out.err_streamed, 2);
	ck_assert(out.stdin_wait_s == 1.5);

	/* The supervisor's document: seed 003's keys, error null when none. */
	struct json_object *doc = ipc_result_json(&out);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(
				 json_object_object_get(doc, "error"), "message")),
			 "division by zero");
	json_object_put(doc);
	ipc_result_free(&out);

	struct ipc_result ok = {.success = 1, .out = ipc_text_of("2\n"), .err = ipc_text_of("")};
	roundtrip(IPC_RESULT, &ok, &out);
	ck_assert_ptr_null(out.error);
	ck_assert_uint_eq(out.n_rich, 0);
	doc = ipc_result_json(&out);
	ck_assert_str_eq(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN),
			 "{\"success\":true,\"stdout\":\"2\\n\",\"stderr\":\"\","
			 "\"rich_outputs\":[],\"error\":null,\"execution_time\":0.0,"
			 "\"kernel_restarted\":false}");
	json_object_put(doc);
	ipc_result_free(&out);
	json_object_put(rich[0].data);
	json_object_put(rich[1].data);
}
END_TEST

START_TEST(small_messages_roundtrip)
{
	struct ipc_kernel_died kd = {.pid = 99, .signal = 9, .message = ipc_text_of("killed"),
				     .memory_limit_exceeded = 1};
	struct ipc_kernel_died kd2 = {.pid = 99, .exit_code = 3, .message = ipc_text_of("exit")};
	struct ipc_log lg = {4, ipc_text_of("a warning")};
	struct ipc_start_failed sf = {ipc_text_of("no user namespaces")};
	struct ipc_waiting wt = {60};
	struct ipc_input_request iq = {ipc_text_of("Name? ")};
	struct ipc_input_reply ir = {.value = ipc_text_of("Ada")}, eof = {.eof = 1}, cancel = {.cancel = 1};
	union {
		struct ipc_kernel_died kd;
		struct ipc_log lg;
		struct ipc_start_failed sf;
		struct ipc_waiting wt;
		struct ipc_input_request iq;
		struct ipc_input_reply ir;
	} out;

	roundtrip(IPC_KERNEL_DIED, &kd, &out.kd);
	ck_assert_int_eq(out.kd.signal, 9);
	ck_assert_int_eq(out.kd.exit_code, 0);
	ck_assert_int_eq(out.kd.memory_limit_exceeded, 1);
	ipc_kernel_died_free(&out.kd);
	roundtrip(IPC_KERNEL_DIED, &kd2, &out.kd);
	ck_assert_int_eq(out.kd.exit_code, 3);
	ck_assert_int_eq(out.kd.signal, 0);
	ipc_kernel_died_free(&out.kd);
	roundtrip(IPC_LOG, &lg, &out.lg);
	ck_assert_int_eq(out.lg.priority, 4);
	ck_assert_str_eq(out.lg.message.s, "a warning");
	ipc_log_free(&out.lg);
	roundtrip(IPC_START_FAILED, &sf, &out.sf);
	ck_assert_str_eq(out.sf.message.s, "no user namespaces");
	ipc_start_failed_free(&out.sf);
	roundtrip(IPC_WAITING, &wt, &out.wt);
	ck_assert(out.wt.seconds == 60);
	ipc_waiting_free(&out.wt);
	roundtrip(IPC_INPUT_REQUEST, &iq, &out.iq);
	ck_assert_str_eq(out.iq.prompt.s, "Name? ");
	ipc_input_request_free(&out.iq);
	roundtrip(IPC_INPUT_REPLY, &ir, &out.ir);
	ck_assert_str_eq(out.ir.value.s, "Ada");
	ck_assert_int_eq(out.ir.eof + out.ir.cancel, 0);
	ipc_input_reply_free(&out.ir);
	roundtrip(IPC_INPUT_REPLY, &eof, &out.ir);
	ck_assert_int_eq(out.ir.eof, 1);
	ck_assert_uint_eq(out.ir.value.len, 0);
	ipc_input_reply_free(&out.ir);
	roundtrip(IPC_INPUT_REPLY, &cancel, &out.ir);
	ck_assert_int_eq(out.ir.cancel, 1);
	ipc_input_reply_free(&out.ir);
}
END_TEST

/* Code mode's pair; a seq of 0 and a request over 1 MiB are refused. */
START_TEST(upstream_messages)
{
	struct ipc_upstream_call uc = {7, ipc_text_of("{\"seq\":7,\"op\":\"list\"}")}, out_c;
	struct ipc_upstream_reply ur = {7, ipc_text_of("{\"seq\":7,\"ok\":true}")}, out_r;
	struct ipc_upstream_call zero = {0, ipc_text_of("{}")};
	char err[IPC_ERR_LEN];
	struct buf b;

	roundtrip(IPC_UPSTREAM_CALL, &uc, &out_c);
	ck_assert_int_eq(out_c.seq, 7);
	ck_assert_str_eq(out_c.request.s, "{\"seq\":7,\"op\":\"list\"}");
	ipc_upstream_call_free(&out_c);
	roundtrip(IPC_UPSTREAM_REPLY, &ur, &out_r);
	ck_assert_int_eq(out_r.seq, 7);
	ck_assert_str_eq(out_r.reply.s, "{\"seq\":7,\"ok\":true}");
	ipc_upstream_reply_free(&out_r);
	buf_init(&b);
	ck_assert_int_eq(ipc_upstream_call_encode(&b, 1, &zero, err, sizeof(err)), -1);
	size_t big = 1024 * 1024 + 1;
	struct ipc_upstream_call huge = {1, {xmalloc(big + 1), big}};
	memset(huge.request.s, 'a', big);
	huge.request.s[big] = '\0';
	b.len = 0;
	ck_assert_int_eq(ipc_upstream_call_encode(&b, 1, &huge, err, sizeof(err)), 0);
	struct ipc_msg f;
	ck_assert_int_eq(ipc_decode((unsigned char *)b.data, b.len, &f, err, sizeof(err)),
			 (ssize_t)b.len);
	ck_assert_int_eq(ipc_upstream_call_decode(&f, &out_c, err, sizeof(err)), -1);
	ipc_upstream_call_free(&out_c);
	ipc_msg_clear(&f);
	free(huge.request.s);
	buf_free(&b);
}
END_TEST

START_TEST(empty_messages)
{
	static const unsigned types[] = {IPC_INTERRUPT, IPC_RESTART_KERNEL, IPC_SHUTDOWN,
					 IPC_STREAM};
	char err[IPC_ERR_LEN];
	char e[ERR_LEN] = "";

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct buf b;
		struct ipc_msg f;
		buf_init(&b);
		ck_assert_int_eq(ipc_empty_encode(&b, types[i], 5, e, sizeof(e)), 0);
		ck_assert_uint_eq(b.len, IPC_HDR_LEN);
		ck_assert_int_eq(ipc_decode((unsigned char *)b.data, b.len, &f, e, sizeof(e)),
				 IPC_HDR_LEN);
		ck_assert_int_eq(ipc_empty_decode(&f, types[i], err, sizeof(err)), 0);
		buf_free(&b);
		f = frame_of(types[i], "{}");
		ck_assert_int_eq(ipc_empty_decode(&f, types[i], err, sizeof(err)), 0);
		ipc_msg_clear(&f);
		f = frame_of(types[i], "{\"junk\": 1}");
		ck_assert_int_eq(ipc_empty_decode(&f, types[i], err, sizeof(err)), -1);
		ck_assert(strstr(err, "takes no members") != NULL);
		ipc_msg_clear(&f);
		ck_assert_uint_eq(ipc_msg_size(types[i]), 0);
	}
	struct buf b;
	buf_init(&b);
	ck_assert_int_eq(ipc_empty_encode(&b, IPC_READY, 1, e, sizeof(e)), -1);
	ck_assert_uint_eq(b.len, 0);
	buf_free(&b);
}
END_TEST

/* type, payload (NULL: none), what the complaint must contain */
static const struct {
	unsigned type;
	const char *json, *want;
} rejected[] = {
	/* no payload, or not an object */
	{IPC_READY, NULL, "READY: empty payload"},
	/* missing fields */
	{IPC_READY, "{\"language\": \"python\", \"restarted\": false}",
	 "READY: kernel_pid: is missing"},
	{IPC_START, "{\"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}", "START: argv: is missing"},
	{IPC_START, "{\"argv\": [\"k\"], \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: env: is missing"},
	{IPC_EXECUTE, "{\"timeout_s\": 1}", "EXECUTE: code: is missing"},
	{IPC_EXECUTE, "{\"code\": \"1\"}", "EXECUTE: timeout_s: is missing"},
	{IPC_OUTPUT, "{\"text\": \"x\"}", "OUTPUT: name: is missing"},
	{IPC_WAITING, "{}", "WAITING: seconds: is missing"},
	{IPC_INPUT_REPLY, "{\"value\": \"x\", \"eof\": true}",
	 "INPUT_REPLY: value, eof and cancel exclude each other"},
	{IPC_INPUT_REPLY, "{\"eof\": true, \"cancel\": true}",
	 "INPUT_REPLY: value, eof and cancel exclude each other"},
	{IPC_INPUT_REPLY, "{\"value\": 1}", "INPUT_REPLY: value:"},
	{IPC_INPUT_REQUEST, "{\"prompt\": \"x\", \"password\": true}", "INPUT_REQUEST:"},
	{IPC_WAITING, "{\"seconds\": -1}", "WAITING: seconds:"},
	{IPC_RESULT, "{\"success\": true, \"stderr\": \"\", \"rich_outputs\": [], \"error\": null,"
		     " \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: stdout: is missing"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: error: is missing"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\":"
		     " [{\"mime_type\": \"text/plain\"}], \"error\": null, \"execution_time\": 0,"
		     " \"kernel_restarted\": false}",
	 "RESULT: rich_outputs[0]: a rich output needs data or file"},
	{IPC_RESULT, "{\"success\": false, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": {\"type\": \"E\", \"message\": \"m\"}, \"execution_time\": 0,"
		     " \"kernel_restarted\": false}",
	 "RESULT: error.traceback: is missing"},
	{IPC_KERNEL_DIED, "{\"pid\": 5}", "KERNEL_DIED: message: is missing"},
	{IPC_LOG, "{\"message\": \"x\"}", "LOG: priority: is missing"},
	{IPC_START_FAILED, "{}", "START_FAILED: message: is missing"},
	/* wrong JSON types */
	{IPC_READY, "{\"kernel_pid\": \"123\", \"language\": \"p\", \"restarted\": false}",
	 "READY: kernel_pid: must be an integer in [2, 2147483647]"},
	{IPC_READY, "{\"kernel_pid\": 12.5, \"language\": \"p\", \"restarted\": false}",
	 "kernel_pid: must be an integer"},
	{IPC_READY, "{\"kernel_pid\": 12, \"language\": 5, \"restarted\": false}",
	 "READY: language: it must be a string"},
	{IPC_READY, "{\"kernel_pid\": 12, \"language\": \"p\", \"restarted\": 1}",
	 "READY: restarted: must be true or false"},
	{IPC_RESULT, "{\"success\": \"yes\", \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": null, \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: success: must be true or false"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": 1, \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": null, \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: stdout: must be a string"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": {},"
		     " \"error\": null, \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: rich_outputs: must be an array of objects"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": \"boom\", \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: error: must be a JSON object"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\":"
		     " [{\"mime_type\": \"a/b\", \"data\": null}], \"error\": null,"
		     " \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: rich_outputs[0].data: must not be null"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": null, \"execution_time\": 0, \"kernel_restarted\": false,"
		     " \"dropped_mime\": [\"a/b\", 7]}",
	 "RESULT: dropped_mime: each item must be a string"},
	{IPC_START, "{\"argv\": \"k\", \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: argv: must be an array of strings"},
	{IPC_START, "{\"argv\": [1], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: argv: each item must be a string"},
	{IPC_START, "{\"argv\": [], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: argv: must not be empty"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": [], \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: env: must be an object of strings"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {\"A\": 1}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: env: each value must be a string"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {\"A=B\": \"1\"}, \"cwd\": \"/c\","
		    " \"runtime_dir\": \"/r\"}",
	 "START: env: names must be non-empty, without '='"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"allow_mime\": [null]}",
	 "START: allow_mime: each item must be a string"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"interrupt_mode\": \"kill\"}",
	 "START: interrupt_mode: must be one of \"signal\", \"message\""},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"landlock_abi\": 65}",
	 "START: landlock_abi: must be an integer in [0, 64]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"hide_paths\": [\"etc/codeexecd.yaml\"]}",
	 "START: hide_paths:"},
	{IPC_OUTPUT, "{\"name\": \"stdin\", \"text\": \"x\"}",
	 "OUTPUT: name: must be one of \"stdout\", \"stderr\""},
	{IPC_EXECUTE, "{\"code\": \"1\", \"timeout_s\": \"5\"}", "EXECUTE: timeout_s: must be a number"},
	/* out of bounds, and strings that break their rules */
	{IPC_READY, "{\"kernel_pid\": 1, \"language\": \"p\", \"restarted\": false}",
	 "READY: kernel_pid: must be an integer in [2, 2147483647]"},
	{IPC_READY, "{\"kernel_pid\": -5, \"language\": \"p\", \"restarted\": false}",
	 "kernel_pid: must be an integer in"},
	{IPC_READY, "{\"kernel_pid\": 2147483648, \"language\": \"p\", \"restarted\": false}",
	 "kernel_pid: must be an integer in"},
	{IPC_READY, "{\"kernel_pid\": 99999999999999999999999, \"language\": \"p\","
		    " \"restarted\": false}",
	 "kernel_pid: must be an integer in"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": null, \"execution_time\": 0, \"kernel_restarted\": false,"
		     " \"spill_files\": -1}",
	 "RESULT: spill_files: must be an integer in [0, 1000000]"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": null, \"execution_time\": 0, \"kernel_restarted\": false,"
		     " \"stdout_streamed\": -3}",
	 "RESULT: stdout_streamed: must be an integer in"},
	{IPC_LOG, "{\"priority\": 8, \"message\": \"x\"}", "LOG: priority: must be an integer in [0, 7]"},
	{IPC_LOG, "{\"priority\": -1, \"message\": \"x\"}", "LOG: priority: must be an integer in"},
	{IPC_EXECUTE, "{\"code\": \"1\", \"timeout_s\": -1}",
	 "EXECUTE: timeout_s: must be a number in [0, 1e+09]"},
	{IPC_EXECUTE, "{\"code\": \"1\", \"timeout_s\": 1e300}", "EXECUTE: timeout_s: must be a number"},
	{IPC_EXECUTE, "{\"code\": \"1\", \"timeout_s\": 1, \"allow_mime\": \"text/plain\"}",
	 "EXECUTE: allow_mime: must be an array of strings"},
	{IPC_EXECUTE, "{\"code\": \"1\", \"timeout_s\": 1, \"output_limit\": -1}",
	 "EXECUTE: output_limit: must be an integer in [0, 2147483647]"},
	{IPC_EXECUTE, "{\"code\": \"1\", \"timeout_s\": 1, \"rich_limit\": 1099511627776}",
	 "EXECUTE: rich_limit: must be an integer in"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\": [],"
		     " \"error\": null, \"execution_time\": -0.5, \"kernel_restarted\": false}",
	 "RESULT: execution_time: must be a number in [0, 1e+09]"},
	{IPC_KERNEL_DIED, "{\"pid\": 5, \"exit_code\": 256, \"message\": \"x\"}",
	 "KERNEL_DIED: exit_code: must be an integer in [0, 255]"},
	{IPC_KERNEL_DIED, "{\"pid\": 5, \"signal\": 0, \"message\": \"x\"}",
	 "KERNEL_DIED: signal: must be an integer in [1, 127]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"uid\": 0, \"gid\": 0}",
	 "START: uid: must be an integer in [1, 4294967294]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"uid\": 4294967296, \"gid\": 5}",
	 "START: uid: must be an integer in"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"limits\": {\"pids\": 4194305}}",
	 "START: limits.pids: must be an integer in [0, 4194304]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"startup_timeout_s\": 1e6}",
	 "START: startup_timeout_s: must be a number in [0, 86400]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"rel\", \"runtime_dir\": \"/r\"}",
	 "START: cwd: must be an absolute path"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/a\\u0000b\", \"runtime_dir\": \"/r\"}",
	 "START: cwd: it holds a NUL character"},
	{IPC_START, "{\"argv\": [\"k\\u0000\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\"}",
	 "START: argv: each item holds a NUL character"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"cgroup\": {\"name\": \"..\"}}",
	 "START: cgroup.name: must be one path component of [A-Za-z0-9._-]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"cgroup\": {\"name\": \"k-1\", \"memory\": {\"version\": 3, \"parent\": \"/p\"}}}",
	 "START: cgroup.memory.version: must be an integer in [1, 2]"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"cgroup\": {\"name\": \"k-1\", \"pids\": {\"version\": 1, \"parent\": \"p\"}}}",
	 "START: cgroup.pids.parent: must be an absolute path"},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\":"
		     " [{\"mime_type\": \"\", \"data\": \"x\"}], \"error\": null,"
		     " \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: rich_outputs[0].mime_type: must not be empty"},
	/* extra junk: members no table names, at any depth */
	{IPC_READY, "{\"kernel_pid\": 12, \"language\": \"p\", \"restarted\": false, \"pgid\": 1}",
	 "READY: unknown member \"pgid\""},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"limits\": {\"swap_mb\": 1}}",
	 "START: limits: unknown member \"swap_mb\""},
	{IPC_RESULT, "{\"success\": true, \"stdout\": \"\", \"stderr\": \"\", \"rich_outputs\":"
		     " [{\"mime_type\": \"a/b\", \"data\": \"x\", \"meta\": {}}], \"error\": null,"
		     " \"execution_time\": 0, \"kernel_restarted\": false}",
	 "RESULT: rich_outputs[0]: unknown member \"meta\""},
	/* rules between fields */
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"uid\": 1000}",
	 "START: uid and gid must come together"},
	{IPC_START, "{\"argv\": [\"k\"], \"env\": {}, \"cwd\": \"/c\", \"runtime_dir\": \"/r\","
		    " \"limits\": {\"memory_mb\": 100}}",
	 "START: limits.memory_mb, pids and cpu need a cgroup layout"},
	{IPC_KERNEL_DIED, "{\"pid\": 5, \"exit_code\": 1, \"signal\": 9, \"message\": \"x\"}",
	 "KERNEL_DIED: exit_code and signal exclude each other"},
};

START_TEST(rejections)
{
	unsigned char buf[4096];
	char err[IPC_ERR_LEN];

	for (size_t i = 0; i < sizeof(rejected) / sizeof(rejected[0]); i++) {
		struct ipc_msg f = frame_of(rejected[i].type, rejected[i].json);
		/* A failed decode leaves nothing to free, but freeing is allowed. */
		memset(buf, 0xa5, sizeof(buf));
		ck_assert_uint_le(ipc_msg_size(rejected[i].type), sizeof(buf));
		err[0] = '\0';
		int rc = ipc_msg_decode(&f, rejected[i].type, buf, err, sizeof(err));
		ck_assert_msg(rc == -1 && strstr(err, rejected[i].want) != NULL,
			      "case %zu %s: want \"%s\", got %s \"%s\"", i,
			      rejected[i].json ? rejected[i].json : "(empty)", rejected[i].want,
			      rc == 0 ? "accepted" : "", err);
		ipc_msg_free(rejected[i].type, buf);
		/* A view checks exactly what a decode checks. */
		err[0] = '\0';
		rc = ipc_msg_view(&f, rejected[i].type, buf, err, sizeof(err));
		ck_assert_msg(rc == -1 && strstr(err, rejected[i].want) != NULL,
			      "view, case %zu: want \"%s\", got %s \"%s\"", i, rejected[i].want,
			      rc == 0 ? "accepted" : "", err);
		ipc_msg_view_free(rejected[i].type, buf);
		ipc_msg_clear(&f);
	}
}
END_TEST

START_TEST(wrong_type)
{
	struct ipc_start st;
	struct ipc_ready r;
	char err[IPC_ERR_LEN];
	struct ipc_msg f = frame_of(IPC_READY, "{\"kernel_pid\": 12, \"language\": \"p\","
					       " \"restarted\": false}");

	ck_assert_int_eq(ipc_start_decode(&f, &st, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "expected START, got READY");
	ck_assert_int_eq(ipc_empty_decode(&f, IPC_SHUTDOWN, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "expected SHUTDOWN, got READY");
	ck_assert_int_eq(ipc_ready_decode(&f, &r, err, sizeof(err)), 0);
	ipc_ready_free(&r);
	ipc_msg_clear(&f);
}
END_TEST

START_TEST(encode_refusals)
{
	struct buf b;
	char err[ERR_LEN] = "";
	char *argv[] = {"k", NULL};
	char *bad_env[] = {"NOEQUALS", NULL};
	char *env[] = {NULL};
	struct ipc_start st = {.argv = argv, .env = bad_env, .cwd = "/c", .runtime_dir = "/r"};
	struct ipc_output o = {(enum ipc_stream)7, {"x", 1}};
	struct ipc_ready r = {12, NULL, 0, NULL};

	buf_init(&b);
	ck_assert_int_eq(ipc_start_encode(&b, 1, &st, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "an env entry is not NAME=value");
	st.env = env;
	st.uid = 1000; /* without gid */
	ck_assert_int_eq(ipc_start_encode(&b, 1, &st, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "uid and gid must come together");
	ck_assert_int_eq(ipc_output_encode(&b, 1, &o, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "an enum field is out of range");
	ck_assert_int_eq(ipc_ready_encode(&b, 1, &r, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "a required field is missing");
	struct ipc_execute e = {ipc_text_of("1"), -1, 0, 0, 0, 0, NULL, 0, 0, 0, 0};
	ck_assert_int_eq(ipc_execute_encode(&b, 1, &e, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "a number is out of its bounds");
	ck_assert_uint_eq(b.len, 0); /* nothing half-written */
	buf_free(&b);
}
END_TEST

START_TEST(oversized_send)
{
	int sv[2];
	size_t len = IPC_MAX_PAYLOAD + 1;
	struct ipc_output o = {IPC_STDOUT, {xmalloc(len + 1), len}};

	memset(o.text.s, 'a', len);
	o.text.s[len] = '\0';
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(ipc_output_send(sv[0], 1, &o), -1);
	ck_assert_int_eq(errno, EMSGSIZE);
	free(o.text.s);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ipc_msg");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, file_messages);
	tcase_add_test(tc, start_roundtrip);
	tcase_add_test(tc, start_minimal_defaults);
	tcase_add_test(tc, execute_roundtrip);
	tcase_add_test(tc, ready_roundtrip);
	tcase_add_test(tc, output_roundtrip);
	tcase_add_test(tc, result_roundtrip);
	tcase_add_test(tc, streaming_roundtrip);
	tcase_add_test(tc, result_take);
	tcase_add_test(tc, result_view);
	tcase_add_test(tc, small_messages_roundtrip);
	tcase_add_test(tc, empty_messages);
	tcase_add_test(tc, rejections);
	tcase_add_test(tc, wrong_type);
	tcase_add_test(tc, encode_refusals);
	tcase_add_test(tc, oversized_send);
	tcase_add_test(tc, upstream_messages);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
