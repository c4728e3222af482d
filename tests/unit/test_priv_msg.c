/*
 * test_priv_msg.c - the front <-> parent codec: a round trip of every
 * message, each field's bounds, records of the wrong size, version or type,
 * and descriptors where none belong (SCM_RIGHTS over a seqpacket pair).
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "priv_msg.h"

/* Encode, decode, encode again: the same bytes, the same struct. */
static void
roundtrip(const struct priv_msg *m)
{
	unsigned char a[PRIV_MSG_MAX], b[PRIV_MSG_MAX];
	char err[PRIV_ERR_LEN];
	struct priv_msg back;

	ssize_t n = priv_msg_encode(m, a, sizeof(a), err, sizeof(err));
	ck_assert_msg(n > 0, "encode %s: %s", priv_type_name(m->type), err);
	ck_assert_msg(priv_msg_decode(a, (size_t)n, &back, err, sizeof(err)) == 0, "decode: %s",
		      err);
	ck_assert_int_eq(back.type, m->type);
	ck_assert_int_eq(priv_msg_encode(&back, b, sizeof(b), err, sizeof(err)), n);
	ck_assert_int_eq(memcmp(a, b, (size_t)n), 0);
	if (m->type == PRIV_REFUSED)
		ck_assert_str_eq(back.u.refused.reason, m->u.refused.reason);
	else
		ck_assert_int_eq(memcmp(&back.u, &m->u, sizeof(m->u)), 0);
}

START_TEST(every_message_roundtrip)
{
	struct priv_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PRIV_SPAWN_WORKER;
	m.u.spawn = (struct priv_spawn_worker){7, NET_SECCOMP, 3};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_END_WORKER;
	m.u.end.worker = 0xffffffffu;
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_KILL_KERNEL;
	m.u.kill = (struct priv_kill_kernel){3, 4242};
	roundtrip(&m);
	m.type = PRIV_CLAIM_KERNEL;
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_REMOVE_SESSION_DIR;
	m.u.remove.dir = 9;
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_WORKER_STARTED;
	m.u.started = (struct priv_worker_started){7, 1, 2, 31337, 63001, "0123456789abcdef"};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_WORKER_EXITED;
	m.u.exited = (struct priv_worker_exited){1, 9}; /* SIGKILL */
	roundtrip(&m);
	m.u.exited.status = 3 << 8; /* exited 3 */
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_REFUSED;
	m.u.refused.request = 999;
	m.u.refused.ref = 5;
	strcpy(m.u.refused.reason, "worker 5 was never started");
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_PREPROCESS;
	m.u.pre.seq = 12;
	strcpy(m.u.pre.session, "0123456789abcdef0123456789abcdef");
	strcpy(m.u.pre.identity, "bob@example.org");
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_PREPROCESSED;
	m.u.pred = (struct priv_preprocessed){12, 1 << 8, PRIV_PP_FAILED};
	roundtrip(&m);
	m.u.pred = (struct priv_preprocessed){12, 9, PRIV_PP_TIMEOUT};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_SIDECAR_STATE;
	m.u.sidecar = (struct priv_sidecar_state){15, PRIV_SC_BACKOFF, 0, 3, 1764600000, 0, 41234};
	roundtrip(&m);
	m.u.sidecar = (struct priv_sidecar_state){0, PRIV_SC_RUNNING, 4242, 0, 1, 204800, 80};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_SECRET;
	strcpy(m.u.secret.path, "/etc/codeexecd/tokens");
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_SECRETS_SENT;
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_DIR_LEFT;
	m.u.left = (struct priv_dir_left){3, 63460, "fedcba9876543210"};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_FORK_DIR;
	m.u.fork = (struct priv_fork_dir){12, 3};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_DIR_FORKED;
	m.u.forked = (struct priv_dir_forked){12, 5, 63461, "0123456789abcdef", 1, 0xfffffff0u,
					      70000, 3};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_EGRESS_BIND;
	m.u.bind.worker = 4;
	strcpy(m.u.bind.session, "0123456789abcdef0123456789abcdef");
	strcpy(m.u.bind.identity, "agent-a");
	roundtrip(&m);
}
END_TEST

/* EGRESS_BIND: a session id of lowercase hex and an identity, as PREPROCESS's. */
START_TEST(egress_bind_bounds)
{
	struct priv_msg m = {.type = PRIV_EGRESS_BIND, .u.bind = {4, "0123", "agent-a"}};
	unsigned char out[PRIV_MSG_MAX];
	char err[PRIV_ERR_LEN];

	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	strcpy(m.u.bind.session, "0123456789ABCDEF0123456789abcdef");
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	strcpy(m.u.bind.session, "0123456789abcdef0123456789abcdef");
	m.u.bind.identity[0] = '\0';
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	strcpy(m.u.bind.identity, "agent\n-a");
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	m.u.bind.worker = 0;
	strcpy(m.u.bind.identity, "agent-a");
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "EGRESS_BIND: worker: 0 is no id"));
}
END_TEST

/* FORK_DIR names a directory the parent issued: never 0, nor a seq 0. */
START_TEST(fork_dir_bounds)
{
	struct priv_msg m = {.type = PRIV_FORK_DIR, .u.fork = {12, 0}};
	unsigned char out[PRIV_MSG_MAX];
	char err[PRIV_ERR_LEN];

	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "FORK_DIR: dir: 0 is no id"));
	unsigned char rec[] = {0, PRIV_VERSION, 0, PRIV_FORK_DIR, 0, 0, 0, 0, 0, 0, 0, 3};
	ck_assert_int_eq(priv_msg_decode(rec, sizeof(rec), &m, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "FORK_DIR: seq: 0 is no id"));
	rec[7] = 1;
	ck_assert_int_eq(priv_msg_decode(rec, sizeof(rec), &m, err, sizeof(err)), 0);
	ck_assert_int_eq(m.u.fork.dir, 3);
}
END_TEST

/* Decode `len` bytes; expect a refusal whose text holds `what`. */
static void
refused(const unsigned char *in, size_t len, const char *what)
{
	char err[PRIV_ERR_LEN] = "";
	struct priv_msg m;

	ck_assert_msg(priv_msg_decode(in, len, &m, err, sizeof(err)) == -1,
		      "accepted, expected \"%s\"", what);
	ck_assert_msg(strstr(err, what) != NULL, "\"%s\" does not say \"%s\"", err, what);
}

START_TEST(bad_records)
{
	/* KILL_KERNEL worker 1 pid 100 */
	unsigned char ok[] = {0, PRIV_VERSION, 0, 3, 0, 0, 0, 1, 0, 0, 0, 100};
	unsigned char r[PRIV_MSG_MAX + 8];
	struct priv_msg m;
	char err[PRIV_ERR_LEN];

	ck_assert_int_eq(priv_msg_decode(ok, sizeof(ok), &m, err, sizeof(err)), 0);
	ck_assert_int_eq(m.u.kill.kernel_pid, 100);
	refused(ok, 3, "shorter than a header");
	refused(ok, sizeof(ok) - 1, "truncated at kernel_pid");
	memcpy(r, ok, sizeof(ok));
	r[sizeof(ok)] = 0;
	refused(r, sizeof(ok) + 1, "13 bytes, 12 expected");
	memcpy(r, ok, sizeof(ok));
	r[1] = 1;
	refused(r, sizeof(ok), "protocol version 1");
	memcpy(r, ok, sizeof(ok));
	r[3] = 99;
	refused(r, sizeof(ok), "type 99: unknown");
	memcpy(r, ok, sizeof(ok));
	r[7] = 0;
	refused(r, sizeof(ok), "worker: 0 is no id");
	/* pids the parent must never signal: init, 0 (our group), -1 (everyone) */
	for (int pid = -1; pid <= 1; pid++) {
		memcpy(r, ok, sizeof(ok));
		r[8] = r[9] = r[10] = r[11] = pid == -1 ? 0xff : 0;
		r[11] = pid == 1 ? 1 : r[11];
		refused(r, sizeof(ok), "is no process of ours");
	}
	/* SPAWN_WORKER with network mode 3 */
	unsigned char spawn[] = {0, PRIV_VERSION, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0};
	refused(spawn, sizeof(spawn), "3 is no network mode");
	/* WORKER_EXITED: a stopped child (0x137f) and a status past 16 bits */
	unsigned char exited[] = {0, PRIV_VERSION, 0, 33, 0, 0, 0, 1, 0, 0, 0x13, 0x7f};
	refused(exited, sizeof(exited), "no wait status of a dead child");
	exited[9] = 1;
	exited[11] = 9;
	refused(exited, sizeof(exited), "no wait status of a dead child");
	/* REFUSED: empty reason, NUL, control bytes, too long */
	unsigned char ref[PRIV_MSG_MAX] = {0, PRIV_VERSION, 0, 34, 0, 1, 0, 0, 0, 5};
	refused(ref, 10, "empty");
	memcpy(ref + 10, "a\0b", 3);
	refused(ref, 13, "holds a NUL");
	memcpy(ref + 10, "a\nb", 3);
	refused(ref, 13, "not printable");
	memset(ref + 10, 'x', sizeof(ref) - 10);
	refused(ref, sizeof(ref), "longer than 199 bytes");
	memset(r, 'x', sizeof(r));
	memcpy(r, ref, 10);
	refused(r, sizeof(r), "more than 256");
	/* PREPROCESS: a session id that is not 32 lowercase hex digits, no identity */
	unsigned char pre[PRIV_MSG_MAX] = {0, PRIV_VERSION, 0, 6, 0, 0, 0, 1};
	memset(pre + 8, 'a', PRIV_SESSION_LEN);
	memcpy(pre + 8 + PRIV_SESSION_LEN, "alice", 5);
	ck_assert_int_eq(priv_msg_decode(pre, 8 + PRIV_SESSION_LEN + 5, &m, err, sizeof(err)), 0);
	ck_assert_str_eq(m.u.pre.identity, "alice");
	pre[8] = 'A';
	refused(pre, 8 + PRIV_SESSION_LEN + 5, "session: not 32 lowercase hex digits");
	pre[8] = 'a';
	refused(pre, 8 + PRIV_SESSION_LEN, "identity: empty");
	pre[8 + PRIV_SESSION_LEN] = '\n';
	refused(pre, 8 + PRIV_SESSION_LEN + 5, "identity: byte 0 is not printable");
	/* SIDECAR_STATE: an index past PRIV_SIDECARS_MAX, a state past the last */
	unsigned char sc[] = {0, PRIV_VERSION, 0, 38, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 0,
			      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	refused(sc, sizeof(sc), "16 is no sidecar");
	sc[7] = 0;
	sc[11] = 5;
	refused(sc, sizeof(sc), "5 is no sidecar state");
	/* PREPROCESSED: an outcome past the last */
	unsigned char pred[] = {0, PRIV_VERSION, 0, 37, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4};
	refused(pred, sizeof(pred), "4 is no outcome");
	pred[15] = 3;
	ck_assert_int_eq(priv_msg_decode(pred, sizeof(pred), &m, err, sizeof(err)), 0);
}
END_TEST

START_TEST(encode_refusals)
{
	unsigned char out[PRIV_MSG_MAX];
	char err[PRIV_ERR_LEN];
	struct priv_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PRIV_KILL_KERNEL;
	m.u.kill = (struct priv_kill_kernel){1, 1};
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	m.type = (enum priv_type)30;
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_REFUSED;
	m.u.refused.request = 1;
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)),
			 -1); /* empty reason */
	memset(m.u.refused.reason, 'x', sizeof(m.u.refused.reason)); /* no NUL */
	ck_assert_int_eq(priv_msg_encode(&m, out, sizeof(out), err, sizeof(err)), -1);
}
END_TEST

/* Send one raw record with `nfd` descriptors (copies of stdin) attached. */
static void
send_raw(int sock, const void *data, size_t len, int nfd)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	int fds[2] = {0, 0};
	struct iovec iov = {(void *)data, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfd) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfd * sizeof(int));
	}
	ck_assert_int_eq(sendmsg(sock, &mh, 0), (ssize_t)len);
}

/* Descriptors open in this process (below 1024). */
static int
open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) != -1;
	return n;
}

START_TEST(descriptors)
{
	int sv[2], worker[2], fd;
	struct priv_msg m, got;
	char err[PRIV_ERR_LEN];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, worker), 0);
	memset(&m, 0, sizeof(m));
	m.type = PRIV_WORKER_STARTED;
	m.u.started = (struct priv_worker_started){1, 2, 3, 400, 0, "00000000deadbeef"};
	ck_assert_int_eq(priv_msg_send(sv[0], &m, worker[0]), 0);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), 1);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(got.u.started.worker, 2);
	/* the passed end works: what goes in at worker[1] comes out at fd */
	ck_assert_int_eq(write(worker[1], "x", 1), 1);
	char c;
	ck_assert_int_eq(read(fd, &c, 1), 1);
	close(fd);

	/* the sender refuses a descriptor on the wrong type and none on STARTED */
	ck_assert_int_eq(priv_msg_send(sv[0], &m, -1), -1);
	ck_assert_int_eq(errno, EINVAL);
	m.type = PRIV_END_WORKER;
	m.u.end.worker = 1;
	ck_assert_int_eq(priv_msg_send(sv[0], &m, worker[0]), -1);

	int before = open_fds();
	/* END_WORKER with a descriptor: refused, the descriptor closed */
	unsigned char end[] = {0, PRIV_VERSION, 0, 2, 0, 0, 0, 1};
	send_raw(sv[0], end, sizeof(end), 1);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "END_WORKER carries 1 descriptors"), "%s", err);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(open_fds(), before);
	/* WORKER_STARTED with two, with none, with one that is no socket */
	unsigned char st[] = {0, PRIV_VERSION, 0, 32, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 1, 0, 0, 0, 0, 0,
			      '0', '1', '2', '3', '4', '5', '6', '7',
			      '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
	send_raw(sv[0], st, sizeof(st), 2);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "2 descriptors"), "%s", err);
	ck_assert_int_eq(open_fds(), before);
	send_raw(sv[0], st, sizeof(st), 0);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "0 descriptors"), "%s", err);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(devnull, 0);
	before = open_fds();
	{
		/* send devnull itself */
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = {st, sizeof(st)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf)};
		memset(&ctl, 0, sizeof(ctl));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &devnull, sizeof(int));
		ck_assert_int_eq(sendmsg(sv[0], &mh, 0), (ssize_t)sizeof(st));
	}
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "not a socket"), "%s", err);
	ck_assert_int_eq(open_fds(), before);
	/* PREPROCESS carries a regular file (a memfd): one, not none, not a socket */
	memset(&m, 0, sizeof(m));
	m.type = PRIV_PREPROCESS;
	m.u.pre.seq = 1;
	memset(m.u.pre.session, 'f', PRIV_SESSION_LEN);
	strcpy(m.u.pre.identity, "anonymous");
	int code = memfd_create("code", MFD_CLOEXEC);
	ck_assert_int_ge(code, 0);
	ck_assert_int_eq(priv_msg_send(sv[0], &m, -1), -1);
	ck_assert_int_eq(priv_msg_send(sv[0], &m, code), 0);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), 1);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(priv_msg_send(sv[0], &m, worker[0]), 0); /* the sender does not look */
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "PREPROCESS with a descriptor that is not a regular file"), "%s",
		      err);
	/* SECRET too, and SECRETS_SENT carries none */
	memset(&m, 0, sizeof(m));
	m.type = PRIV_SECRET;
	strcpy(m.u.secret.path, "/etc/codeexecd/tokens");
	ck_assert_int_eq(priv_msg_send(sv[0], &m, -1), -1);
	ck_assert_int_eq(priv_msg_send(sv[0], &m, code), 0);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), 1);
	ck_assert_str_eq(got.u.secret.path, "/etc/codeexecd/tokens");
	close(fd);
	ck_assert_int_eq(priv_msg_send(sv[0], &m, worker[0]), 0);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "SECRET with a descriptor that is not a regular file"), "%s",
		      err);
	m.type = PRIV_SECRETS_SENT;
	ck_assert_int_eq(priv_msg_send(sv[0], &m, code), -1);
	close(code);
	/* an oversized record */
	unsigned char big[PRIV_MSG_MAX + 50];
	memset(big, 'x', sizeof(big));
	memcpy(big, end, 4);
	send_raw(sv[0], big, sizeof(big), 0);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "more than"), "%s", err);
	/* EOF */
	close(sv[0]);
	ck_assert_int_eq(priv_msg_recv(sv[1], &got, &fd, err, sizeof(err)), 0);
	close(sv[1]);
	close(devnull);
	close(worker[0]);
	close(worker[1]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("priv_msg");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, every_message_roundtrip);
	tcase_add_test(tc, bad_records);
	tcase_add_test(tc, fork_dir_bounds);
	tcase_add_test(tc, egress_bind_bounds);
	tcase_add_test(tc, encode_refusals);
	tcase_add_test(tc, descriptors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
