/*
 * test_monitor.c - a compromised front against the privileged parent's
 * monitor (supervisor/parent/monitor.c), over a real SOCK_SEQPACKET socketpair,
 * with stand-in acts that count what the parent did. The front asks for
 * workers, directories and pids it was never given, for sandbox settings
 * the configuration does not allow, out of state, and sends malformed
 * records and the parent's own messages: each is refused (REFUSED, one log
 * line) and no act happens. An honest front's requests are carried out.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "fdpass.h"
#include "log.h"
#include "monitor.h"
#include "xmalloc.h"

#define FIRST_PID 50000
/* Workers whose end of the parent's line a test can read. */
#define MAX_FAKE 16

/* What the stand-in acts were asked to do. */
static struct {
	int spawned, killed_workers, claims, killed_kernels, gone, removed;
	int preprocessed, killed_groups;
	pid_t last_group;
	char last_session[PRIV_SESSION_LEN + 1], last_identity[PRIV_REASON_MAX];
	int out_fd, err_fd; /* the last command's output files, the monitor's */
	pid_t last_killed, last_kernel;
	char last_removed[64];
	int refusals_logged;
	char last_reused[64]; /* the kept directory the last spawn was given, or "" */
	uid_t last_reused_uid;
	int forks;
	char last_forked[64]; /* the directory the last fork copied */
	int fork_fails;	      /* the next fork fails, as one over fork_max_bytes */
	int rescue_peer[MAX_FAKE]; /* worker i's end of the parent's line (fd 4) */
	int binds;		   /* EGRESS_BIND passed on */
	pid_t last_bound;
	char bound_session[PRIV_SESSION_LEN + 1], bound_identity[PRIV_REASON_MAX];
} acts;

static int
fake_spawn(void *ctx, const char *reuse, uid_t reuse_uid, pid_t *pid, int *front_fd,
	   int *rescue_fd, char **dir, char name[PRIV_NAME_LEN + 1], uid_t *uid, char *why,
	   size_t why_len)
{
	int sv[2], rv[2];

	(void)ctx;
	snprintf(acts.last_reused, sizeof(acts.last_reused), "%s", reuse ? reuse : "");
	acts.last_reused_uid = reuse_uid;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(why, why_len, "socketpair: %s", strerror(errno));
		return -1;
	}
	close(sv[1]); /* the worker's end: no worker here */
	/* The worker's end of the parent's line: kept, to see what a handover sends. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rv) == -1) {
		snprintf(why, why_len, "socketpair: %s", strerror(errno));
		close(sv[0]);
		return -1;
	}
	if (acts.spawned < MAX_FAKE)
		acts.rescue_peer[acts.spawned] = rv[1];
	else
		close(rv[1]);
	*rescue_fd = rv[0];
	*pid = FIRST_PID + acts.spawned;
	*front_fd = sv[0];
	*dir = reuse ? xstrdup(reuse) : xasprintf("/nonexistent/sessions/%016x", acts.spawned);
	snprintf(name, PRIV_NAME_LEN + 1, "%016x", acts.spawned);
	*uid = reuse ? reuse_uid : 1000 + (uid_t)acts.spawned;
	acts.spawned++;
	return 0;
}

static void
fake_kill_worker(void *ctx, pid_t pid)
{
	(void)ctx;
	acts.killed_workers++;
	acts.last_killed = pid;
}

/* A worker's kernel is its pid + 1000; anything else is some other process. */
static int
fake_claim(void *ctx, pid_t worker, pid_t kernel, int *pidfd, char *why, size_t why_len)
{
	(void)ctx;
	acts.claims++;
	if (kernel != worker + 1000) {
		snprintf(why, why_len, "pid %d: not a child of worker %d", (int)kernel, (int)worker);
		return -1;
	}
	*pidfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 1;
}

static void
fake_kill_kernel(void *ctx, int pidfd, pid_t kernel)
{
	(void)ctx;
	ck_assert_int_ge(pidfd, 0);
	acts.killed_kernels++;
	acts.last_kernel = kernel;
}

static void
fake_gone(void *ctx, pid_t pid)
{
	(void)ctx;
	(void)pid;
	acts.gone++;
}

static void
fake_remove(void *ctx, const char *dir)
{
	(void)ctx;
	acts.removed++;
	snprintf(acts.last_removed, sizeof(acts.last_removed), "%s", dir);
}

#define FIRST_PRE_PID 60000

/* A preprocess_command that has already written: "OUT" on stdout, "ERR" on stderr. */
static int
fake_preprocess(void *ctx, const struct priv_preprocess *p, int code_fd, pid_t *pid, int *out_fd,
		int *err_fd, char *why, size_t why_len)
{
	struct stat st;

	(void)ctx;
	(void)why;
	(void)why_len;
	ck_assert_int_eq(fstat(code_fd, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	snprintf(acts.last_session, sizeof(acts.last_session), "%s", p->session);
	snprintf(acts.last_identity, sizeof(acts.last_identity), "%s", p->identity);
	*pid = FIRST_PRE_PID + acts.preprocessed++;
	*out_fd = memfd_create("out", MFD_CLOEXEC);
	*err_fd = memfd_create("err", MFD_CLOEXEC);
	ck_assert_int_eq(write(*out_fd, "OUT", 3), 3);
	ck_assert_int_eq(write(*err_fd, "ERR", 3), 3);
	acts.out_fd = *out_fd;
	acts.err_fd = *err_fd;
	return 0;
}

static void
fake_kill_group(void *ctx, pid_t pgid)
{
	(void)ctx;
	acts.killed_groups++;
	acts.last_group = pgid;
}

/* A copy into /nonexistent/sessions/fork-N, of kernel uid 2000 + N, by
 * "child" 7000 + N, which the test reaps (monitor_child_exited). */
static int
fake_fork(void *ctx, const char *src, struct monitor_fork *job, char *why, size_t why_len)
{
	(void)ctx;
	(void)why;
	(void)why_len;
	snprintf(acts.last_forked, sizeof(acts.last_forked), "%s", src);
	job->dir = xasprintf("/nonexistent/sessions/fork-%d", acts.forks);
	snprintf(job->name, PRIV_NAME_LEN + 1, "%016x", 0xf000 + acts.forks);
	job->uid = 2000 + (uid_t)acts.forks;
	job->pid = 7000 + acts.forks++;
	job->result_fd = -1;
	return 0;
}

static int
fake_fork_done(void *ctx, struct monitor_fork *job, int status, struct fs_copy_stats *st,
	       char *why, size_t why_len)
{
	(void)ctx;
	if (acts.fork_fails || status != 0) {
		snprintf(why, why_len, "more than fork_max_bytes");
		free(job->dir);
		job->dir = NULL;
		return -1;
	}
	*st = (struct fs_copy_stats){.bytes = 5000000000LL, .files = 3, .skipped = 2};
	return 0;
}

static void
fake_egress_bind(void *ctx, pid_t pid, const char *session, const char *identity)
{
	(void)ctx;
	acts.binds++;
	acts.last_bound = pid;
	snprintf(acts.bound_session, sizeof(acts.bound_session), "%s", session);
	snprintf(acts.bound_identity, sizeof(acts.bound_identity), "%s", identity);
}

static const struct monitor_ops ops = {fake_spawn,	 fake_kill_worker, fake_claim,
				       fake_kill_kernel, fake_gone,	   fake_remove,
				       fake_preprocess,	 fake_kill_group,  fake_fork,
				       fake_fork_done,	 fake_egress_bind};

static void
sink(int priority, const char *line)
{
	if (priority <= LOG_WARNING && strstr(line, "front: refused"))
		acts.refusals_logged++;
}

struct rig {
	int parent, front;
	struct monitor *m;
};

static struct rig
rig_new(int max_workers)
{
	int sv[2];
	struct rig r;

	memset(&acts, 0, sizeof(acts));
	log_set_sink(sink);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv),
			 0);
	r.parent = sv[0];
	r.front = sv[1];
	r.m = monitor_new(&ops, NULL, r.parent, NET_SECCOMP, max_workers);
	return r;
}

static void
rig_free(struct rig *r)
{
	monitor_free(&r->m);
	ck_assert_ptr_null(r->m);
	close(r->parent);
	close(r->front);
	for (int i = 0; i < acts.spawned && i < MAX_FAKE; i++)
		close(acts.rescue_peer[i]);
}

/* The front sends `m`; the parent reads and answers it. */
static void
ask(struct rig *r, unsigned type, uint32_t a, int32_t b)
{
	struct priv_msg m = {.type = (enum priv_type)type};

	switch (type) {
	case PRIV_SPAWN_WORKER: m.u.spawn = (struct priv_spawn_worker){a, b, 0}; break;
	case PRIV_END_WORKER: m.u.end.worker = a; break;
	case PRIV_CLAIM_KERNEL:
	case PRIV_KILL_KERNEL: m.u.kill = (struct priv_kill_kernel){a, b}; break;
	case PRIV_REMOVE_SESSION_DIR: m.u.remove.dir = a; break;
	case PRIV_FORK_DIR: m.u.fork = (struct priv_fork_dir){(uint32_t)b, a}; break;
	case PRIV_EGRESS_BIND:
		m.u.bind.worker = a;
		snprintf(m.u.bind.session, sizeof(m.u.bind.session), "%032x", (unsigned)b);
		snprintf(m.u.bind.identity, sizeof(m.u.bind.identity), "agent-%d", b);
		break;
	}
	ck_assert_int_eq(priv_msg_send(r->front, &m, -1), 0);
	ck_assert_int_eq(monitor_request(r->m), 0);
}

/* The front sends raw bytes (with `fd` attached unless -1); the parent answers. */
static void
ask_raw(struct rig *r, const void *data, size_t len, int fd)
{
	ck_assert_int_eq(priv_record_send(r->front, data, len, fd), 0);
	ck_assert_int_eq(monitor_request(r->m), 0);
}

/* The next message to the front, which must be of `type`; *fd gets its descriptor. */
static struct priv_msg
answer(struct rig *r, unsigned type, int *fd)
{
	struct priv_msg m;
	char err[PRIV_ERR_LEN];
	int got;

	ck_assert_int_eq(priv_msg_recv(r->front, &m, &got, err, sizeof(err)), 1);
	ck_assert_msg(m.type == type, "got %s, expected %s", priv_type_name(m.type),
		      priv_type_name(type));
	if (fd)
		*fd = got;
	else if (got != -1)
		close(got);
	return m;
}

/* Nothing more for the front. */
static void
silence(struct rig *r)
{
	struct priv_msg m;
	char err[PRIV_ERR_LEN];
	int fd;

	ck_assert_int_eq(priv_msg_recv(r->front, &m, &fd, err, sizeof(err)), -1);
	ck_assert_int_eq(errno, EAGAIN);
}

/* The request just made was refused for `what`, logged, and nothing was done. */
static void
was_refused(struct rig *r, unsigned type, const char *what, int logged_before)
{
	struct priv_msg m = answer(r, PRIV_REFUSED, NULL);

	ck_assert_uint_eq(m.u.refused.request, type);
	ck_assert_msg(strstr(m.u.refused.reason, what) != NULL, "\"%s\" does not say \"%s\"",
		      m.u.refused.reason, what);
	ck_assert_int_eq(acts.refusals_logged, logged_before + 1);
	silence(r);
}

/* Spawn one worker honestly; its worker and dir ids in *worker, *dir. */
static void
spawn(struct rig *r, uint32_t *worker, uint32_t *dir, pid_t *pid)
{
	int fd;
	struct stat st;

	ask(r, PRIV_SPAWN_WORKER, 77, NET_SECCOMP);
	struct priv_msg m = answer(r, PRIV_WORKER_STARTED, &fd);
	ck_assert_uint_eq(m.u.started.seq, 77);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	close(fd);
	*worker = m.u.started.worker;
	*dir = m.u.started.dir;
	*pid = m.u.started.pid;
}

/* The front sends PREPROCESS `seq` with a memfd of code (or `fd`, if not -1). */
static void
ask_preprocess(struct rig *r, uint32_t seq, int fd)
{
	struct priv_msg m = {.type = PRIV_PREPROCESS};
	int code = fd != -1 ? fd : memfd_create("code", MFD_CLOEXEC);

	m.u.pre.seq = seq;
	memset(m.u.pre.session, 'a', PRIV_SESSION_LEN);
	snprintf(m.u.pre.identity, sizeof(m.u.pre.identity), "alice@example");
	ck_assert_int_eq(priv_msg_send(r->front, &m, code), 0);
	if (fd == -1)
		close(code);
	ck_assert_int_eq(monitor_request(r->m), 0);
}

/* The descriptor's whole content. */
static void
content_is(int fd, const char *want)
{
	char got[16] = {0};

	ck_assert_int_eq(pread(fd, got, sizeof(got) - 1, 0), (ssize_t)strlen(want));
	ck_assert_str_eq(got, want);
}

START_TEST(preprocess_requests)
{
	struct rig r = rig_new(2);
	int n, fd;

	/* not configured: refused, nothing runs */
	n = acts.refusals_logged;
	ask_preprocess(&r, 1, -1);
	was_refused(&r, PRIV_PREPROCESS, "preprocess_command is not set", n);
	ck_assert_int_eq(acts.preprocessed, 0);

	monitor_set_preprocess(r.m, 2, 10, 100);
	/* honest: runs with the session and identity; exit 0 answers stdout */
	ask_preprocess(&r, 1, -1);
	silence(&r);
	ck_assert_int_eq(acts.preprocessed, 1);
	ck_assert_int_eq(monitor_preprocessing(r.m), 1);
	ck_assert_int_eq(strspn(acts.last_session, "a"), PRIV_SESSION_LEN);
	ck_assert_str_eq(acts.last_identity, "alice@example");
	ck_assert_int_eq(monitor_child_exited(r.m, FIRST_PRE_PID, 0), 1);
	struct priv_msg m = answer(&r, PRIV_PREPROCESSED, &fd);
	ck_assert_uint_eq(m.u.pred.seq, 1);
	ck_assert_uint_eq(m.u.pred.outcome, PRIV_PP_OK);
	content_is(fd, "OUT");
	close(fd);
	ck_assert_int_eq(acts.killed_groups, 1); /* what it left in its group */
	ck_assert_int_eq(acts.last_group, FIRST_PRE_PID);
	ck_assert_int_eq(monitor_preprocessing(r.m), 0);

	/* non-zero exit: its stderr */
	ask_preprocess(&r, 2, -1);
	ck_assert_int_eq(monitor_child_exited(r.m, FIRST_PRE_PID + 1, 3 << 8), 1);
	m = answer(&r, PRIV_PREPROCESSED, &fd);
	ck_assert_uint_eq(m.u.pred.outcome, PRIV_PP_FAILED);
	ck_assert_int_eq(m.u.pred.status, 3 << 8);
	content_is(fd, "ERR");
	close(fd);

	/* killed by SIGXFSZ (RLIMIT_FSIZE), or output past the bound: too big */
	ask_preprocess(&r, 3, -1);
	ck_assert_int_eq(monitor_child_exited(r.m, FIRST_PRE_PID + 2, SIGXFSZ), 1);
	m = answer(&r, PRIV_PREPROCESSED, NULL);
	ck_assert_uint_eq(m.u.pred.outcome, PRIV_PP_TOO_BIG);
	ask_preprocess(&r, 4, -1);
	ck_assert_int_eq(ftruncate(acts.out_fd, 101), 0);
	ck_assert_int_eq(monitor_child_exited(r.m, FIRST_PRE_PID + 3, 0), 1);
	m = answer(&r, PRIV_PREPROCESSED, NULL);
	ck_assert_uint_eq(m.u.pred.outcome, PRIV_PP_TOO_BIG);

	/* a seq that runs already, and more than the most at once: refused */
	ask_preprocess(&r, 5, -1);
	silence(&r);
	n = acts.refusals_logged;
	ask_preprocess(&r, 5, -1);
	was_refused(&r, PRIV_PREPROCESS, "request 5 is running already", n);
	ask_preprocess(&r, 6, -1);
	silence(&r);
	ask_preprocess(&r, 7, -1);
	was_refused(&r, PRIV_PREPROCESS, "2 preprocess_commands run already", n + 1);
	ck_assert_int_eq(acts.preprocessed, 6);

	/* the time limit: monitor_tick kills the group once, and the answer says so */
	monitor_free(&r.m);
	r.m = monitor_new(&ops, NULL, r.parent, NET_SECCOMP, 2);
	monitor_set_preprocess(r.m, 2, 0, 100);
	ask_preprocess(&r, 8, -1);
	int killed = acts.killed_groups;
	monitor_tick(r.m);
	monitor_tick(r.m);
	ck_assert_int_eq(acts.killed_groups, killed + 1);
	ck_assert_int_eq(monitor_child_exited(r.m, FIRST_PRE_PID + acts.preprocessed - 1, SIGKILL), 1);
	m = answer(&r, PRIV_PREPROCESSED, &fd);
	ck_assert_uint_eq(m.u.pred.outcome, PRIV_PP_TIMEOUT);
	content_is(fd, "ERR");
	close(fd);

	/* without its descriptor, or with a socket for one: malformed, nothing runs */
	unsigned char rec[PRIV_MSG_MAX];
	struct priv_msg q = {.type = PRIV_PREPROCESS};
	q.u.pre.seq = 9;
	memset(q.u.pre.session, 'b', PRIV_SESSION_LEN);
	snprintf(q.u.pre.identity, sizeof(q.u.pre.identity), "x");
	ssize_t len = priv_msg_encode(&q, rec, sizeof(rec), NULL, 0);
	ck_assert_int_gt(len, 0);
	n = acts.refusals_logged;
	ask_raw(&r, rec, (size_t)len, -1);
	was_refused(&r, PRIV_PREPROCESS, "carries 0 descriptors", n);
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ask_raw(&r, rec, (size_t)len, sv[0]);
	was_refused(&r, PRIV_PREPROCESS, "not a regular file", n + 1);
	close(sv[0]);
	close(sv[1]);
	ck_assert_int_eq(acts.preprocessed, 7);

	/* the front dies: every running command's group is killed */
	ask_preprocess(&r, 10, -1);
	killed = acts.killed_groups;
	ck_assert_int_eq(monitor_end_all(r.m), 0);
	ck_assert_int_eq(acts.killed_groups, killed + 1);
	rig_free(&r);
}
END_TEST

START_TEST(honest_front)
{
	struct rig r = rig_new(4);
	uint32_t w, d;
	pid_t pid;

	spawn(&r, &w, &d, &pid);
	ck_assert_int_eq(acts.spawned, 1);
	ck_assert_int_eq(monitor_live(r.m), 1);
	ask(&r, PRIV_CLAIM_KERNEL, w, pid + 1000);
	silence(&r);
	ask(&r, PRIV_KILL_KERNEL, w, pid + 1000);
	silence(&r);
	ck_assert_int_eq(acts.killed_kernels, 1);
	ck_assert_int_eq(acts.last_kernel, pid + 1000);
	/* a restarted kernel is claimed again; ending the worker kills both */
	ask(&r, PRIV_CLAIM_KERNEL, w, pid + 1000);
	ask(&r, PRIV_END_WORKER, w, 0);
	silence(&r);
	ck_assert_int_eq(acts.killed_workers, 1);
	ck_assert_int_eq(acts.last_killed, pid);
	ck_assert_int_eq(acts.killed_kernels, 2);
	ck_assert_int_eq(monitor_child_exited(r.m, pid + 1, 0), 0); /* not ours */
	silence(&r);
	ck_assert_int_eq(monitor_child_exited(r.m, pid, 9), 1);
	struct priv_msg m = answer(&r, PRIV_WORKER_EXITED, NULL);
	ck_assert_uint_eq(m.u.exited.worker, w);
	ck_assert_int_eq(m.u.exited.status, 9);
	ck_assert_int_eq(acts.gone, 1);
	ck_assert_int_eq(monitor_live(r.m), 0);
	ask(&r, PRIV_REMOVE_SESSION_DIR, d, 0);
	silence(&r);
	ck_assert_int_eq(acts.removed, 1);
	ck_assert_str_eq(acts.last_removed, "/nonexistent/sessions/0000000000000000");
	ck_assert_int_eq(acts.refusals_logged, 0);

	/* a kernel claimed and never killed dies with its worker */
	spawn(&r, &w, &d, &pid);
	ask(&r, PRIV_CLAIM_KERNEL, w, pid + 1000);
	ck_assert_int_eq(monitor_child_exited(r.m, pid, 0), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	ck_assert_int_eq(acts.killed_kernels, 3);
	/* the front dies: every live worker and claimed kernel is killed */
	uint32_t w2, d2;
	pid_t pid2;
	spawn(&r, &w, &d, &pid);
	spawn(&r, &w2, &d2, &pid2);
	ask(&r, PRIV_CLAIM_KERNEL, w2, pid2 + 1000);
	ck_assert_int_eq(monitor_end_all(r.m), 2);
	ck_assert_int_eq(acts.killed_workers, 3);
	ck_assert_int_eq(acts.killed_kernels, 4);
	close(r.front);
	r.front = -1;
	ck_assert_int_eq(monitor_request(r.m), -1); /* EOF */
	rig_free(&r);
}
END_TEST

/* SPAWN_WORKER of a kept directory `dir`, as `seq`. */
static void
ask_reuse(struct rig *r, uint32_t seq, uint32_t dir)
{
	struct priv_msg m = {.type = PRIV_SPAWN_WORKER};

	m.u.spawn = (struct priv_spawn_worker){seq, NET_SECCOMP, dir};
	ck_assert_int_eq(priv_msg_send(r->front, &m, -1), 0);
	ck_assert_int_eq(monitor_request(r->m), 0);
}

/* A session's directory kept after its worker was reaped is given, with its
 * kernel uid, to one new worker: never while its worker runs, never one the
 * parent did not make or has removed, never twice. */
START_TEST(kept_directories)
{
	struct rig r = rig_new(4);
	uint32_t w, d, w2, d2;
	pid_t pid, pid2;
	int n = acts.refusals_logged, fd;

	spawn(&r, &w, &d, &pid);
	ask_reuse(&r, 5, d);
	was_refused(&r, PRIV_SPAWN_WORKER, "still runs", n++);
	ask_reuse(&r, 5, 999);
	was_refused(&r, PRIV_SPAWN_WORKER, "never made", n++);
	ck_assert_int_eq(monitor_child_exited(r.m, pid, 9), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	int spawned = acts.spawned;
	ask_reuse(&r, 6, d);
	struct priv_msg m = answer(&r, PRIV_WORKER_STARTED, &fd);
	close(fd);
	ck_assert_int_eq(acts.spawned, spawned + 1);
	ck_assert_uint_eq(m.u.started.seq, 6);
	ck_assert_uint_eq(m.u.started.dir, d); /* the same directory, by the same id */
	ck_assert_uint_ne(m.u.started.worker, w);
	ck_assert_str_eq(acts.last_reused, "/nonexistent/sessions/0000000000000000");
	ck_assert_uint_eq(acts.last_reused_uid, 1000); /* the first worker's kernel uid */
	ck_assert_uint_eq(m.u.started.uid, 1000);
	/* it is the new worker's now: not given again while it runs */
	ask_reuse(&r, 7, d);
	was_refused(&r, PRIV_SPAWN_WORKER, "still runs", n++);
	/* removed once its second worker is reaped: then never given again */
	w2 = m.u.started.worker;
	pid2 = m.u.started.pid;
	ck_assert_int_eq(monitor_child_exited(r.m, pid2, 0), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	ask(&r, PRIV_REMOVE_SESSION_DIR, d, 0);
	silence(&r);
	ask_reuse(&r, 8, d);
	was_refused(&r, PRIV_SPAWN_WORKER, "never made", n++);
	(void)w2;
	(void)d2;
	rig_free(&r);
}
END_TEST

/* persist_sessions: a directory left from before is told to the front and
 * is a kept one; the front's loss removes nothing. */
START_TEST(directories_left)
{
	struct rig r = rig_new(4);
	uint32_t w, d;
	pid_t pid;
	int fd;

	monitor_set_persist(r.m);
	ck_assert_int_eq(monitor_adopt_dir(r.m, "/nonexistent/sessions/00112233445566ff",
					   "00112233445566ff", 63480), 0);
	struct priv_msg m = answer(&r, PRIV_DIR_LEFT, NULL);
	ck_assert_str_eq(m.u.left.name, "00112233445566ff");
	ck_assert_uint_eq(m.u.left.uid, 63480);
	uint32_t left = m.u.left.dir;
	ask_reuse(&r, 5, left);
	m = answer(&r, PRIV_WORKER_STARTED, &fd);
	close(fd);
	ck_assert_uint_eq(m.u.started.dir, left);
	ck_assert_str_eq(acts.last_reused, "/nonexistent/sessions/00112233445566ff");
	ck_assert_uint_eq(acts.last_reused_uid, 63480);
	/* the front goes: neither the reaped nor the live worker's directory is removed */
	spawn(&r, &w, &d, &pid);
	ck_assert_int_eq(monitor_child_exited(r.m, pid, 9), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	int removed = acts.removed;
	monitor_front_gone(r.m);
	ck_assert_int_eq(monitor_child_exited(r.m, m.u.started.pid, 9), 1);
	ck_assert_int_eq(acts.removed, removed);
	rig_free(&r);
}
END_TEST

/* FORK_DIR copies a directory the parent made, a live worker's or a kept
 * one; the copy is a kept directory of its own uid, which one worker gets. */
START_TEST(forked_directories)
{
	struct rig r = rig_new(4);
	uint32_t w, d;
	pid_t pid;
	int n = acts.refusals_logged, fd;

	ask(&r, PRIV_FORK_DIR, 999, 3);
	was_refused(&r, PRIV_FORK_DIR, "never made", n++);
	spawn(&r, &w, &d, &pid);
	ask(&r, PRIV_FORK_DIR, d, 4); /* its worker runs: copied all the same */
	silence(&r); /* no answer before the copy's child is reaped */
	ck_assert_int_eq(monitor_child_exited(r.m, 7000, 0), 1);
	struct priv_msg m = answer(&r, PRIV_DIR_FORKED, NULL);
	ck_assert_str_eq(acts.last_forked, "/nonexistent/sessions/0000000000000000");
	ck_assert_uint_eq(m.u.forked.seq, 4);
	ck_assert_uint_ne(m.u.forked.dir, d);
	ck_assert_uint_eq(m.u.forked.uid, 2000);
	ck_assert_str_eq(m.u.forked.name, "000000000000f000");
	ck_assert_uint_eq((uint64_t)m.u.forked.bytes_hi << 32 | m.u.forked.bytes_lo, 5000000000u);
	ck_assert_uint_eq(m.u.forked.files, 3);
	ck_assert_uint_eq(m.u.forked.skipped, 2);
	uint32_t copy = m.u.forked.dir;
	ask_reuse(&r, 5, copy);
	m = answer(&r, PRIV_WORKER_STARTED, &fd);
	close(fd);
	ck_assert_uint_eq(m.u.started.dir, copy);
	ck_assert_str_eq(acts.last_reused, "/nonexistent/sessions/fork-0");
	ck_assert_uint_eq(acts.last_reused_uid, 2000);
	acts.fork_fails = 1;
	ask(&r, PRIV_FORK_DIR, d, 6);
	ck_assert_int_eq(monitor_child_exited(r.m, 7001, 0), 1);
	was_refused(&r, PRIV_FORK_DIR, "more than fork_max_bytes", n++);
	ck_assert_int_eq(monitor_child_exited(r.m, pid, 9), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	ask(&r, PRIV_REMOVE_SESSION_DIR, d, 0);
	silence(&r);
	ask(&r, PRIV_FORK_DIR, d, 7);
	was_refused(&r, PRIV_FORK_DIR, "never made or is removed", n++);
	rig_free(&r);
}
END_TEST

/* REMOVE_SESSION_DIR while the directory's worker runs (a session closed
 * just after hibernation told its worker to end): removed once it is reaped. */
START_TEST(removed_at_exit)
{
	struct rig r = rig_new(2);
	uint32_t w, d;
	pid_t pid;

	spawn(&r, &w, &d, &pid);
	int removed = acts.removed;
	ask(&r, PRIV_REMOVE_SESSION_DIR, d, 0);
	silence(&r);
	ck_assert_int_eq(acts.removed, removed);
	ck_assert_int_eq(monitor_child_exited(r.m, pid, 0), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	ck_assert_int_eq(acts.removed, removed + 1);
	ck_assert_str_eq(acts.last_removed, "/nonexistent/sessions/0000000000000000");
	rig_free(&r);
}
END_TEST

/*
 * The front died and its workers are kept: a preprocess_command it asked
 * for is killed and its answer dropped; the new front gets each live
 * worker on a fresh socket whose other end the worker gets through its
 * line (fd 4), a reaped worker's kept directory as DIR_LEFT, and a worker
 * whose session was closed is killed, not handed over.
 */
START_TEST(handed_over)
{
	struct rig r = rig_new(4);
	uint32_t w1, d1, w2, d2, w3, d3;
	pid_t p1, p2, p3;
	int fd, peer;
	char byte, buf[8];

	monitor_set_persist(r.m);
	monitor_set_preprocess(r.m, 2, 10, 1000);
	spawn(&r, &w1, &d1, &p1);
	spawn(&r, &w2, &d2, &p2);
	spawn(&r, &w3, &d3, &p3);
	ask(&r, PRIV_CLAIM_KERNEL, w1, p1 + 1000);
	ck_assert_int_eq(monitor_child_exited(r.m, p2, 0), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	ask(&r, PRIV_REMOVE_SESSION_DIR, d3, 0); /* deferred: w3 still runs */
	ask_preprocess(&r, 9, -1);
	silence(&r);

	monitor_keep_workers(r.m);
	ck_assert_int_eq(acts.killed_groups, 1); /* the preprocess_command */
	ck_assert_int_eq(acts.killed_workers, 0);
	ck_assert_int_eq(monitor_child_exited(r.m, FIRST_PRE_PID, 0), 1);
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv),
			 0);
	close(r.parent);
	close(r.front);
	r.parent = sv[0];
	r.front = sv[1];
	ck_assert_int_eq(monitor_hand_over(r.m, r.parent), 1);

	/* w3's session was closed: it is killed, not handed over */
	ck_assert_int_eq(acts.killed_workers, 1);
	ck_assert_int_eq(acts.last_killed, p3);
	/* newest first: w2's kept directory, then w1 live with its kernel */
	struct priv_msg m = answer(&r, PRIV_DIR_LEFT, NULL);
	ck_assert_uint_eq(m.u.left.dir, d2);
	ck_assert_str_eq(m.u.left.name, "0000000000000001");
	m = answer(&r, PRIV_WORKER_LEFT, &fd);
	ck_assert_uint_eq(m.u.wleft.worker, w1);
	ck_assert_uint_eq(m.u.wleft.dir, d1);
	ck_assert_int_eq(m.u.wleft.pid, p1);
	ck_assert_uint_eq(m.u.wleft.kernel, (uint32_t)(p1 + 1000));
	ck_assert_str_eq(m.u.wleft.name, "0000000000000000");
	silence(&r); /* no PREPROCESSED for the old front's request */
	/* the worker's line brought the other end of the front's new socket */
	union fdpass_one ctl;
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ck_assert_int_eq(recvmsg(acts.rescue_peer[0], &mh, MSG_DONTWAIT), 1);
	ck_assert_int_eq(fdpass_take(&mh, &peer), 1);
	ck_assert_int_eq(write(fd, "hello", 5), 5);
	ck_assert_int_eq(read(peer, buf, sizeof(buf)), 5);
	ck_assert_int_eq(memcmp(buf, "hello", 5), 0);
	/* nothing for the others: w2 is reaped, w3 was killed */
	ck_assert_int_eq(recv(acts.rescue_peer[2], &byte, 1, MSG_DONTWAIT), -1);
	close(fd);
	close(peer);
	rig_free(&r);
}
END_TEST

START_TEST(compromised_front)
{
	struct rig r = rig_new(2);
	uint32_t w, d;
	pid_t pid;
	int n;

	spawn(&r, &w, &d, &pid);
	int spawned = acts.spawned;

	/* the egress audit's names: passed on for a live worker only */
	ask(&r, PRIV_EGRESS_BIND, w, 7);
	silence(&r);
	ck_assert_int_eq(acts.binds, 1);
	ck_assert_int_eq(acts.last_bound, pid);
	ck_assert_str_eq(acts.bound_session, "00000000000000000000000000000007");
	ck_assert_str_eq(acts.bound_identity, "agent-7");
	n = acts.refusals_logged;
	ask(&r, PRIV_EGRESS_BIND, 999, 8);
	was_refused(&r, PRIV_EGRESS_BIND, "worker 999 was never started", n);
	ck_assert_int_eq(acts.binds, 1);
	/* a sandbox setting the configuration does not allow */
	n = acts.refusals_logged;
	ask(&r, PRIV_SPAWN_WORKER, 5, NET_INHERIT);
	was_refused(&r, PRIV_SPAWN_WORKER, "network mode inherit asked", n);
	/* workers and directories never issued, or of the wrong kind */
	n = acts.refusals_logged;
	ask(&r, PRIV_END_WORKER, 999, 0);
	was_refused(&r, PRIV_END_WORKER, "worker 999 was never started", n);
	n = acts.refusals_logged;
	ask(&r, PRIV_END_WORKER, d, 0); /* a directory id is no worker id */
	was_refused(&r, PRIV_END_WORKER, "was never started", n);
	n = acts.refusals_logged;
	ask(&r, PRIV_REMOVE_SESSION_DIR, w, 0); /* nor a worker id a directory id */
	was_refused(&r, PRIV_REMOVE_SESSION_DIR, "was never made", n);
	n = acts.refusals_logged;
	ask(&r, PRIV_REMOVE_SESSION_DIR, 12345, 0);
	was_refused(&r, PRIV_REMOVE_SESSION_DIR, "directory 12345 was never made", n);
	/* the directory of a live worker: not removed under it (once it is
	 * reaped, removed_at_exit checks) */
	int removed = acts.removed;
	ask(&r, PRIV_REMOVE_SESSION_DIR, d, 0);
	silence(&r);
	ck_assert_int_eq(acts.removed, removed);
	/* pids that are not the worker's kernel: another process, init, ours */
	n = acts.refusals_logged;
	ask(&r, PRIV_CLAIM_KERNEL, w, 4242);
	was_refused(&r, PRIV_CLAIM_KERNEL, "pid 4242: not a child of worker", n);
	n = acts.refusals_logged;
	ask(&r, PRIV_KILL_KERNEL, w, pid + 1000); /* never claimed */
	was_refused(&r, PRIV_KILL_KERNEL, "is not the kernel claimed", n);
	ask(&r, PRIV_CLAIM_KERNEL, w, pid + 1000);
	silence(&r);
	n = acts.refusals_logged;
	ask(&r, PRIV_KILL_KERNEL, w, 4242); /* claimed, but another pid */
	was_refused(&r, PRIV_KILL_KERNEL, "is not the kernel claimed", n);
	/* pid 1, 0, -1 do not even decode */
	const unsigned char kill_init[] = {0, PRIV_VERSION, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1};
	const unsigned char kill_all[] = {0, PRIV_VERSION, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};
	n = acts.refusals_logged;
	ask_raw(&r, kill_init, sizeof(kill_init), -1);
	was_refused(&r, PRIV_KILL_KERNEL, "is no process of ours", n);
	n = acts.refusals_logged;
	ask_raw(&r, kill_all, sizeof(kill_all), -1);
	was_refused(&r, PRIV_KILL_KERNEL, "is no process of ours", n);
	/* malformed: garbage, short, another version, an unknown type (a "set
	 * uid" the protocol does not have), a descriptor where none belongs */
	const unsigned char garbage[] = "uid=0 path=/etc/shadow";
	n = acts.refusals_logged;
	ask_raw(&r, garbage, sizeof(garbage), -1);
	was_refused(&r, 0x643d /* "d=" */, "malformed", n);
	const unsigned char shortrec[] = {0, PRIV_VERSION, 0, 2, 0, 0};
	n = acts.refusals_logged;
	ask_raw(&r, shortrec, sizeof(shortrec), -1);
	was_refused(&r, PRIV_END_WORKER, "truncated", n);
	const unsigned char v1[] = {0, 1, 0, 2, 0, 0, 0, 1};
	n = acts.refusals_logged;
	ask_raw(&r, v1, sizeof(v1), -1);
	was_refused(&r, PRIV_END_WORKER, "protocol version 1", n);
	const unsigned char setuid[] = {0, PRIV_VERSION, 0, 30, 0, 0, 0, 0};
	n = acts.refusals_logged;
	ask_raw(&r, setuid, sizeof(setuid), -1);
	was_refused(&r, 30, "unknown", n);
	const unsigned char end_w[] = {0, PRIV_VERSION, 0, 2, 0, 0, 0, (unsigned char)w};
	n = acts.refusals_logged;
	ask_raw(&r, end_w, sizeof(end_w), r.front);
	was_refused(&r, PRIV_END_WORKER, "carries 1 descriptors", n);
	/* the parent's own messages */
	struct priv_msg fake = {.type = PRIV_WORKER_EXITED};
	fake.u.exited = (struct priv_worker_exited){w, 0};
	n = acts.refusals_logged;
	ck_assert_int_eq(priv_msg_send(r.front, &fake, -1), 0);
	ck_assert_int_eq(monitor_request(r.m), 0);
	was_refused(&r, PRIV_WORKER_EXITED, "only the parent sends", n);
	fake.type = PRIV_WORKER_STARTED;
	fake.u.started = (struct priv_worker_started){1, w, d, 2, 0, "0000000000000001"};
	n = acts.refusals_logged;
	ck_assert_int_eq(priv_msg_send(r.front, &fake, r.front), 0);
	ck_assert_int_eq(monitor_request(r.m), 0);
	was_refused(&r, PRIV_WORKER_STARTED, "only the parent sends", n);
	/* nothing of all this was done */
	ck_assert_int_eq(acts.spawned, spawned);
	ck_assert_int_eq(acts.killed_workers, 0);
	ck_assert_int_eq(acts.killed_kernels, 0);
	ck_assert_int_eq(acts.removed, 0);
	ck_assert_int_eq(monitor_live(r.m), 1);

	/* more workers than the configuration allows */
	uint32_t w2, d2;
	pid_t pid2;
	spawn(&r, &w2, &d2, &pid2);
	n = acts.refusals_logged;
	ask(&r, PRIV_SPAWN_WORKER, 9, NET_SECCOMP);
	was_refused(&r, PRIV_SPAWN_WORKER, "2 workers live already", n);
	ck_assert_int_eq(acts.spawned, spawned + 1);
	/* out of state: an exited worker, a removed directory */
	ck_assert_int_eq(monitor_child_exited(r.m, pid2, 0), 1);
	answer(&r, PRIV_WORKER_EXITED, NULL);
	n = acts.refusals_logged;
	ask(&r, PRIV_END_WORKER, w2, 0);
	was_refused(&r, PRIV_END_WORKER, "has exited", n);
	n = acts.refusals_logged;
	ask(&r, PRIV_CLAIM_KERNEL, w2, pid2 + 1000);
	was_refused(&r, PRIV_CLAIM_KERNEL, "has exited", n);
	ask(&r, PRIV_REMOVE_SESSION_DIR, d2, 0);
	silence(&r);
	ck_assert_int_eq(acts.removed, 1);
	n = acts.refusals_logged;
	ask(&r, PRIV_REMOVE_SESSION_DIR, d2, 0);
	was_refused(&r, PRIV_REMOVE_SESSION_DIR, "was never made", n);
	ck_assert_int_eq(acts.removed, 1);
	ck_assert_int_eq(acts.killed_workers, 0);
	rig_free(&r);
}
END_TEST

/* A front that never reads its answers is taken for gone, not waited for. */
START_TEST(front_that_does_not_read)
{
	struct rig r = rig_new(1);
	struct priv_msg m = {.type = PRIV_END_WORKER};
	int rc = 0;

	m.u.end.worker = 424242;
	for (int i = 0; i < 100000 && rc == 0; i++) {
		if (priv_msg_send(r.front, &m, -1) == -1)
			break;
		rc = monitor_request(r.m);
	}
	ck_assert_int_eq(rc, -1);
	rig_free(&r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("monitor");
	TCase *tc = tcase_create("requests");

	log_init("test_monitor", 1, LOG_DAEMON);
	tcase_add_test(tc, honest_front);
	tcase_add_test(tc, compromised_front);
	tcase_add_test(tc, kept_directories);
	tcase_add_test(tc, directories_left);
	tcase_add_test(tc, forked_directories);
	tcase_add_test(tc, removed_at_exit);
	tcase_add_test(tc, handed_over);
	tcase_add_test(tc, front_that_does_not_read);
	tcase_add_test(tc, preprocess_requests);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
