/*
 * test_template_proto.c - the kernel template's codec: a round trip of
 * every record, each field's bounds, records of the wrong size, version or
 * type, descriptors of the wrong count or kind (SCM_RIGHTS over a real
 * seqpacket pair), the peer check, and the spec's memfd and parser.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "netmode.h"
#include "template_proto.h"

/* Encode, decode, encode again: the same bytes, the same struct. */
static void
roundtrip(const struct tpl_msg *m)
{
	unsigned char a[TPL_MSG_MAX], b[TPL_MSG_MAX];
	char err[TPL_ERR_LEN];
	struct tpl_msg back;

	ssize_t n = tpl_msg_encode(m, a, sizeof(a), err, sizeof(err));
	ck_assert_msg(n > 0, "encode %s: %s", tpl_type_name(m->type), err);
	ck_assert_msg(tpl_msg_decode(a, (size_t)n, &back, err, sizeof(err)) == 0, "decode: %s",
		      err);
	ck_assert_int_eq(back.type, m->type);
	ck_assert_int_eq(tpl_msg_encode(&back, b, sizeof(b), err, sizeof(err)), n);
	ck_assert_int_eq(memcmp(a, b, (size_t)n), 0);
	ck_assert_int_eq(memcmp(&back.u, &m->u, sizeof(m->u)), 0);
}

START_TEST(every_record_roundtrip)
{
	struct tpl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = TPL_ATTACH;
	m.u.attach.worker = 0xffffffffu;
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWN;
	m.u.spawn = (struct tpl_spawn){7, NET_SECCOMP, 63001, 63001, 1024, 100, CGROUP_NCTL,
				       TPL_UNIX_FDS};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_READY;
	m.u.ready = (struct tpl_ready){4242, 3};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_FORKED;
	m.u.forked = (struct tpl_forked){2, 31337};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_RELEASE;
	m.u.exited.pid = 31337;
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWNED;
	m.u.spawned = (struct tpl_spawned){7, 31337};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_FAILED;
	m.u.failed = (struct tpl_failed){7, 18, EPERM};
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_EXITED;
	m.u.exited = (struct tpl_exited){31337, 9}; /* SIGKILL */
	roundtrip(&m);
	m.u.exited.status = 3 << 8; /* exited 3 */
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = TPL_REFUSED;
	m.u.refused.seq = 7;
	strcpy(m.u.refused.reason, "kernel_network_mode isolated starts by exec");
	roundtrip(&m);
}
END_TEST

/* A field set to v must be refused by the encoder, and its bytes by the decoder. */
static void
refused_both_ways(struct tpl_msg *m, uint32_t *field, uint32_t v, const char *what)
{
	unsigned char rec[TPL_MSG_MAX];
	char err[TPL_ERR_LEN];
	struct tpl_msg back;

	uint32_t good = *field;
	ssize_t n = tpl_msg_encode(m, rec, sizeof(rec), err, sizeof(err));
	ck_assert_int_gt(n, 0);
	*field = v;
	ck_assert_msg(tpl_msg_encode(m, rec, sizeof(rec), err, sizeof(err)) == -1,
		      "encoded %s = %u", what, v);
	ck_assert_msg(strstr(err, "out of bounds") != NULL, "%s: %s", what, err);
	*field = good;
	/* The same value written into a good record's bytes. */
	size_t off = TPL_HDR_LEN + (size_t)((char *)field - (char *)&m->u);
	rec[off] = (unsigned char)(v >> 24);
	rec[off + 1] = (unsigned char)(v >> 16);
	rec[off + 2] = (unsigned char)(v >> 8);
	rec[off + 3] = (unsigned char)v;
	ck_assert_msg(tpl_msg_decode(rec, (size_t)n, &back, err, sizeof(err)) == -1,
		      "decoded %s = %u", what, v);
}

START_TEST(fields_out_of_bounds)
{
	struct tpl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWN;
	m.u.spawn = (struct tpl_spawn){1, NET_INHERIT, 0, 0, 0, 0, 1, 0};
	refused_both_ways(&m, &m.u.spawn.seq, 0, "seq");
	refused_both_ways(&m, &m.u.spawn.mode, NET_SECCOMP + 1, "mode");
	refused_both_ways(&m, &m.u.spawn.n_cg_fds, CGROUP_NCTL + 1, "n_cg_fds");
	refused_both_ways(&m, &m.u.spawn.n_unix_fds, TPL_UNIX_FDS + 1, "n_unix_fds");
	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWNED;
	m.u.spawned = (struct tpl_spawned){1, 100};
	refused_both_ways(&m, (uint32_t *)&m.u.spawned.pid, 1, "pid 1");
	refused_both_ways(&m, (uint32_t *)&m.u.spawned.pid, (uint32_t)-5, "pid -5");
	memset(&m, 0, sizeof(m));
	m.type = TPL_EXITED;
	m.u.exited = (struct tpl_exited){100, 0};
	refused_both_ways(&m, (uint32_t *)&m.u.exited.status, 0x137f, "a stopped status");
	refused_both_ways(&m, (uint32_t *)&m.u.exited.status, 0x10000, "a status of 17 bits");
	memset(&m, 0, sizeof(m));
	m.type = TPL_FORKED;
	m.u.forked = (struct tpl_forked){1, 100};
	refused_both_ways(&m, &m.u.forked.worker, 0, "worker 0");
	m.type = TPL_RELEASE;
	m.u.exited.pid = 100;
	refused_both_ways(&m, (uint32_t *)&m.u.exited.pid, 0, "release of pid 0");
	memset(&m, 0, sizeof(m));
	m.type = TPL_FAILED;
	m.u.failed = (struct tpl_failed){1, 16, 1};
	refused_both_ways(&m, &m.u.failed.stage, 64, "stage");
	refused_both_ways(&m, &m.u.failed.err, 4096, "errno");
}
END_TEST

START_TEST(records_malformed)
{
	unsigned char rec[TPL_MSG_MAX + 8];
	char err[TPL_ERR_LEN];
	struct tpl_msg m, back;

	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWNED;
	m.u.spawned = (struct tpl_spawned){1, 100};
	ssize_t n = tpl_msg_encode(&m, rec, sizeof(rec), err, sizeof(err));
	ck_assert_int_eq(n, TPL_HDR_LEN + 8);
	ck_assert_int_eq(tpl_msg_decode(rec, (size_t)n - 1, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	ck_assert_int_eq(tpl_msg_decode(rec, (size_t)n + 1, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "expected"));
	ck_assert_int_eq(tpl_msg_decode(rec, 3, &back, err, sizeof(err)), -1);
	rec[1] = TPL_VERSION + 1;
	ck_assert_int_eq(tpl_msg_decode(rec, (size_t)n, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "version"));
	rec[1] = TPL_VERSION;
	rec[3] = 99;
	ck_assert_int_eq(tpl_msg_decode(rec, (size_t)n, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown"));
	/* REFUSED: a reason that is empty, holds a NUL or a control byte. */
	memset(&m, 0, sizeof(m));
	m.type = TPL_REFUSED;
	m.u.refused.seq = 2;
	ck_assert_int_eq(tpl_msg_encode(&m, rec, sizeof(rec), err, sizeof(err)), -1);
	strcpy(m.u.refused.reason, "no\ttabs");
	ck_assert_int_eq(tpl_msg_encode(&m, rec, sizeof(rec), err, sizeof(err)), -1);
	strcpy(m.u.refused.reason, "ok reason");
	n = tpl_msg_encode(&m, rec, sizeof(rec), err, sizeof(err));
	ck_assert_int_gt(n, 0);
	rec[TPL_HDR_LEN + 4 + 2] = '\0';
	ck_assert_int_eq(tpl_msg_decode(rec, (size_t)n, &back, err, sizeof(err)), -1);
	/* A record longer than any. */
	memset(rec, 'a', sizeof(rec));
	rec[0] = 0;
	rec[1] = TPL_VERSION;
	rec[2] = 0;
	rec[3] = TPL_REFUSED;
	ck_assert_int_eq(tpl_msg_decode(rec, TPL_MSG_MAX + 1, &back, err, sizeof(err)), -1);
}
END_TEST

static void
seqpacket_pair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* ATTACH over a real pair: one socket passes; none, two, or a file does not. */
START_TEST(descriptors_checked)
{
	int sv[2], other[2], fds[TPL_FDS_MAX], nfds, pipefd[2];
	char err[TPL_ERR_LEN];
	struct tpl_msg m, got;

	seqpacket_pair(sv);
	seqpacket_pair(other);
	memset(&m, 0, sizeof(m));
	m.type = TPL_ATTACH;
	m.u.attach.worker = 5;
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, &other[1], 1), 0);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), 1);
	ck_assert_int_eq(nfds, 1);
	ck_assert_int_eq(got.u.attach.worker, 5);
	close(fds[0]);
	/* The sender refuses a wrong count itself. */
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, NULL, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* A peer that sends it anyway: a raw record without its socket, then with a pipe. */
	unsigned char rec[TPL_MSG_MAX];
	ssize_t n = tpl_msg_encode(&m, rec, sizeof(rec), err, sizeof(err));
	ck_assert_int_eq(send(sv[0], rec, (size_t)n, 0), n);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), -2);
	ck_assert_ptr_nonnull(strstr(err, "carries 0 descriptors"));
	ck_assert_int_eq(pipe(pipefd), 0);
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, &pipefd[0], 1), 0);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), -2);
	ck_assert_ptr_nonnull(strstr(err, "not of its kind"));
	ck_assert_int_eq(nfds, 0);
	/* SPAWNED needs a pidfd: a socket is refused, our own pidfd passes. */
	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWNED;
	m.u.spawned = (struct tpl_spawned){3, (int32_t)getpid()};
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, &other[0], 1), 0);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), -2);
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	ck_assert_int_ge(pidfd, 0);
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, &pidfd, 1), 0);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), 1);
	close(fds[0]);
	close(pidfd);
	/* End of file. */
	close(sv[0]);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), 0);
	close(sv[1]);
	close(other[0]);
	close(other[1]);
	close(pipefd[0]);
	close(pipefd[1]);
}
END_TEST

/* SPAWN with its spec, connection file, directory, stdio, a cgroup file and a socket. */
START_TEST(spawn_carries_its_descriptors)
{
	int sv[2], fds[TPL_FDS_MAX], nfds, so[2];
	char err[TPL_ERR_LEN];
	char *env[] = {"PATH=/usr/bin", "HOME=/tmp", NULL};
	struct tpl_spec spec = {"/run/codeexecd/k1", "/var/lib/codeexecd/s1", env};
	struct tpl_msg m, got;

	seqpacket_pair(sv);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, so), 0);
	int sfd = tpl_spec_write(&spec, err, sizeof(err));
	ck_assert_msg(sfd >= 0, "%s", err);
	int conn = tpl_spec_write(&spec, err, sizeof(err)); /* any regular file */
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int cg = tpl_spec_write(&spec, err, sizeof(err));
	int send_fds[] = {sfd, conn, dir, null, null, cg, so[0]};
	memset(&m, 0, sizeof(m));
	m.type = TPL_SPAWN;
	m.u.spawn = (struct tpl_spawn){9, NET_INHERIT, 0, 0, 256, 0, 1, 1};
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, send_fds, 7), 0);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), 1);
	ck_assert_int_eq(nfds, 7);
	ck_assert_int_eq(got.u.spawn.nofile, 256);
	/* The spec read back from the received memfd; it is sealed against writes. */
	char buf[4096];
	ssize_t n = pread(fds[0], buf, sizeof(buf), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(write(fds[0], "x", 1), -1);
	struct tpl_spec back;
	char *store[8];
	ck_assert_msg(tpl_spec_parse(buf, (size_t)n, &back, store, 8, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_str_eq(back.runtime_dir, spec.runtime_dir);
	ck_assert_str_eq(back.cwd, spec.cwd);
	ck_assert_str_eq(back.envp[0], "PATH=/usr/bin");
	ck_assert_str_eq(back.envp[1], "HOME=/tmp");
	ck_assert_ptr_null(back.envp[2]);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	/* A socket where the cgroup file belongs. */
	send_fds[5] = so[1];
	ck_assert_int_eq(tpl_msg_send(sv[0], &m, send_fds, 7), 0);
	ck_assert_int_eq(tpl_msg_recv(sv[1], &got, fds, &nfds, err, sizeof(err)), -2);
	ck_assert_ptr_nonnull(strstr(err, "descriptor 5"));
	close(sfd), close(conn), close(dir), close(null), close(cg);
	close(so[0]), close(so[1]), close(sv[0]), close(sv[1]);
}
END_TEST

START_TEST(spec_parse_refuses)
{
	char err[TPL_ERR_LEN];
	struct tpl_spec s;
	char *store[4];
	char a[] = "relative\0/cwd\0";
	char b[] = "/run\0/cwd\0NOEQUALS\0";
	char c[] = "/run\0/cwd\0=x\0";
	char d[] = "/run\0/cwd\0A=1\0B=2\0C=3\0D=4\0";
	char e[] = "/run\0/cwd"; /* no final NUL */
	char f[] = "/run\0";

	ck_assert_int_eq(tpl_spec_parse(a, sizeof(a) - 1, &s, store, 4, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "runtime_dir"));
	ck_assert_int_eq(tpl_spec_parse(b, sizeof(b) - 1, &s, store, 4, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "NAME=value"));
	ck_assert_int_eq(tpl_spec_parse(c, sizeof(c) - 1, &s, store, 4, err, sizeof(err)), -1);
	ck_assert_int_eq(tpl_spec_parse(d, sizeof(d) - 1, &s, store, 4, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 3"));
	ck_assert_int_eq(tpl_spec_parse(e, sizeof(e) - 1, &s, store, 4, err, sizeof(err)), -1);
	ck_assert_int_eq(tpl_spec_parse(f, sizeof(f) - 1, &s, store, 4, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no cwd"));
}
END_TEST

/* Both ends of a pair we made are ours: our pid and uid pass, another uid does not. */
START_TEST(peer_checked)
{
	int sv[2];
	char err[TPL_ERR_LEN];

	seqpacket_pair(sv);
	ck_assert_int_eq(tpl_peer_check(sv[1], getpid(), getuid(), err, sizeof(err)), 0);
	ck_assert_int_eq(tpl_peer_check(sv[1], 0, getuid(), err, sizeof(err)), 0);
	ck_assert_int_eq(tpl_peer_check(sv[1], getpid(), getuid() + 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not of pid"));
	ck_assert_int_eq(tpl_peer_check(sv[1], getpid() + 1, getuid(), err, sizeof(err)), -1);
	ck_assert_int_eq(tpl_peer_check(-1, 0, 0, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "SO_PEERCRED"));
	close(sv[0]);
	close(sv[1]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("template_proto");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_record_roundtrip);
	tcase_add_test(tc, fields_out_of_bounds);
	tcase_add_test(tc, records_malformed);
	tcase_add_test(tc, descriptors_checked);
	tcase_add_test(tc, spawn_carries_its_descriptors);
	tcase_add_test(tc, spec_parse_refuses);
	tcase_add_test(tc, peer_checked);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
