/* monitor.c - see monitor.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "monitor.h"
#include "monitor_int.h"
#include "xmalloc.h"

struct monitor *
monitor_new(const struct monitor_ops *ops, void *ctx, int front, enum net_mode mode,
	    int max_workers)
{
	struct monitor *m = xcalloc(1, sizeof(*m));

	m->ops = ops;
	m->ctx = ctx;
	m->front = front;
	m->mode = mode;
	m->max_workers = max_workers;
	m->max_kept = 2 * max_workers;
	m->next_id = 1;
	return m;
}

/* Copy `c`, reaped with `status`, is no front's: what it made goes. */
static void
fork_discard(struct monitor *m, struct mfork *c, int status)
{
	struct fs_copy_stats st;
	char why[PRIV_REASON_MAX];

	if (m->ops->fork_done(m->ctx, &c->job, status, &st, why, sizeof(why)) == 0)
		m->ops->remove_dir(m->ctx, c->job.dir);
	free(c->job.dir);
	free(c);
}

void
monitor_free(struct monitor **mp)
{
	struct monitor *m = *mp;

	if (m == NULL)
		return;
	while (m->workers) {
		struct mworker *w = m->workers;
		m->workers = w->next;
		if (w->pidfd != -1)
			close(w->pidfd);
		if (w->rescue != -1)
			close(w->rescue);
		free(w->dir);
		free(w);
	}
	while (m->pres) {
		struct mpre *p = m->pres;
		m->pres = p->next;
		close(p->out);
		close(p->err);
		free(p);
	}
	/* A copy no front will take: stopped, and what it made removed. */
	while (m->forks) {
		struct mfork *c = m->forks;
		int status = 0;
		m->forks = c->next;
		m->ops->kill_group(m->ctx, c->job.pid);
		while (waitpid(c->job.pid, &status, 0) == -1 && errno == EINTR)
			;
		fork_discard(m, c, status);
	}
	free(m);
	*mp = NULL;
}

void
monitor_set_kept(struct monitor *m, int hibernated)
{
	m->max_kept = 2 * m->max_workers + hibernated;
}

void
monitor_set_persist(struct monitor *m)
{
	m->persist = 1;
}

void
monitor_set_preprocess(struct monitor *m, int max_running, int timeout_s, long max_bytes)
{
	m->pre_max = max_running;
	m->pre_timeout_s = timeout_s;
	m->pre_max_bytes = max_bytes;
}

int
monitor_preprocessing(const struct monitor *m)
{
	int n = 0;
	for (const struct mpre *p = m->pres; p; p = p->next)
		n++;
	return n;
}

int
monitor_live(const struct monitor *m)
{
	int n = 0;
	for (const struct mworker *w = m->workers; w; w = w->next)
		n += w->live;
	return n;
}

/* Directories not removed yet: a front that never removes them is refused
 * new workers rather than filling the disk through us. */
static int
kept_dirs(const struct monitor *m)
{
	int n = 0;
	for (const struct mworker *w = m->workers; w; w = w->next)
		n += w->dir != NULL;
	for (const struct mfork *f = m->forks; f; f = f->next)
		n++; /* a copy under way is one more directory */
	return n;
}

static struct mworker *
by_id(struct monitor *m, uint32_t id)
{
	for (struct mworker *w = m->workers; w; w = w->next)
		if (w->id == id)
			return w;
	return NULL;
}

static struct mworker *
by_dir(struct monitor *m, uint32_t dir)
{
	for (struct mworker *w = m->workers; w; w = w->next)
		if (w->dir_id == dir)
			return w;
	return NULL;
}

int
monitor_broken(const struct monitor *m)
{
	return m->broken;
}

int
monitor_send(struct monitor *m, const struct priv_msg *msg, int fd)
{
	if (m->broken)
		return -1;
	if (priv_msg_send_within(m->front, msg, fd, FRONT_FULL_MS) == 0)
		return 0;
	m->broken = 1;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		log_warnx("the front left its socket full for %d ms: taking it for gone",
			  FRONT_FULL_MS);
	else
		log_warn("send %s to the front", priv_type_name(msg->type));
	return -1;
}

/* Refuse request `type` naming `ref`: one log line, one REFUSED. */
static int __attribute__((format(printf, 4, 5)))
refuse(struct monitor *m, unsigned type, uint32_t ref, const char *fmt, ...)
{
	struct priv_msg r = {.type = PRIV_REFUSED};
	char why[PRIV_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* The reason travels as printable ASCII; the log escapes on its own. */
	for (char *p = why; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	log_warnx("front: refused %s (%u): %s", priv_type_name(type), ref, why);
	r.u.refused.request = (uint16_t)type;
	r.u.refused.ref = ref;
	memcpy(r.u.refused.reason, why, sizeof(why));
	return monitor_send(m, &r, -1);
}

int
monitor_adopt_dir(struct monitor *m, const char *dir, const char name[PRIV_NAME_LEN + 1],
		  uid_t uid)
{
	struct mworker *w = xcalloc(1, sizeof(*w));

	w->id = m->next_id++;
	w->dir_id = m->next_id++;
	w->pidfd = -1;
	w->rescue = -1;
	w->dir = xstrdup(dir);
	w->uid = uid;
	w->next = m->workers;
	m->workers = w;
	return monitor_tell_dir_left(m, w, name);
}

int
monitor_tell_dir_left(struct monitor *m, const struct mworker *w,
		      const char name[PRIV_NAME_LEN + 1])
{
	struct priv_msg r = {.type = PRIV_DIR_LEFT};
	r.u.left = (struct priv_dir_left){w->dir_id, (uint32_t)w->uid, {0}};
	memcpy(r.u.left.name, name, PRIV_NAME_LEN + 1);
	return monitor_send(m, &r, -1);
}

/*
 * The reaped worker whose kept directory SPAWN_WORKER asks for, or NULL
 * after refusing: a directory the parent made, not removed, whose worker
 * no longer runs (two workers never share one).
 */
static struct mworker *
kept_dir(struct monitor *m, const struct priv_spawn_worker *s, int *rc)
{
	struct mworker *old = by_dir(m, s->dir);

	if (old == NULL)
		*rc = refuse(m, PRIV_SPAWN_WORKER, s->seq, "directory %u was never made", s->dir);
	else if (old->dir == NULL)
		*rc = refuse(m, PRIV_SPAWN_WORKER, s->seq, "directory %u is removed already",
			     s->dir);
	else if (old->live)
		*rc = refuse(m, PRIV_SPAWN_WORKER, s->seq,
			     "directory %u belongs to worker %u, which still runs", s->dir,
			     old->id);
	else
		return old;
	return NULL;
}

/* Forget `old`, reaped, whose directory a new worker took. */
static void
forget(struct monitor *m, struct mworker *old)
{
	for (struct mworker **pp = &m->workers; *pp; pp = &(*pp)->next) {
		if (*pp == old) {
			*pp = old->next;
			break;
		}
	}
	free(old->dir);
	free(old);
}

static int
on_spawn(struct monitor *m, const struct priv_spawn_worker *s)
{
	char why[PRIV_REASON_MAX - 40];
	pid_t pid;
	int fd, rescue;
	char *dir, name[PRIV_NAME_LEN + 1];
	uid_t uid;
	struct mworker *old = NULL;
	int rc = 0;

	if (s->network_mode != m->mode)
		return refuse(m, PRIV_SPAWN_WORKER, s->seq,
			      "network mode %s asked, the configuration says %s",
			      net_mode_names[s->network_mode], net_mode_names[m->mode]);
	if (monitor_live(m) >= m->max_workers)
		return refuse(m, PRIV_SPAWN_WORKER, s->seq, "%d workers live already, the most "
			      "the configuration allows", m->max_workers);
	if (s->dir != 0 && (old = kept_dir(m, s, &rc)) == NULL)
		return rc;
	if (old == NULL && kept_dirs(m) >= m->max_kept)
		return refuse(m, PRIV_SPAWN_WORKER, s->seq, "%d session directories are not "
			      "removed yet", kept_dirs(m));
	if (m->ops->spawn(m->ctx, old ? old->dir : NULL, old ? old->uid : 0, &pid, &fd, &rescue,
			  &dir, name, &uid, why, sizeof(why)) == -1)
		return refuse(m, PRIV_SPAWN_WORKER, s->seq, "cannot start a worker: %s", why);

	struct mworker *w = xcalloc(1, sizeof(*w));
	w->id = m->next_id++;
	w->dir_id = old ? old->dir_id : m->next_id++;
	if (old)
		forget(m, old);
	w->pid = pid;
	w->live = 1;
	w->pidfd = -1;
	w->rescue = rescue;
	w->dir = dir;
	w->uid = uid;
	w->next = m->workers;
	m->workers = w;
	struct priv_msg r = {.type = PRIV_WORKER_STARTED};
	r.u.started = (struct priv_worker_started){s->seq, w->id, w->dir_id, (int32_t)pid,
						   (uint32_t)uid, {0}};
	memcpy(r.u.started.name, name, sizeof(name));
	rc = monitor_send(m, &r, fd);
	close(fd);
	return rc;
}

/* The live worker `id` names, or NULL after refusing the request. */
static struct mworker *
live_worker(struct monitor *m, unsigned type, uint32_t id)
{
	struct mworker *w = by_id(m, id);

	if (w == NULL)
		refuse(m, type, id, "worker %u was never started", id);
	else if (!w->live)
		refuse(m, type, id, "worker %u has exited", id);
	else
		return w;
	return NULL;
}

/* Kill what worker `w` runs: its claimed kernel's group. */
static void
kill_kernel_of(struct monitor *m, struct mworker *w)
{
	if (w->pidfd == -1)
		return;
	m->ops->kill_kernel(m->ctx, w->pidfd, w->kernel);
	close(w->pidfd);
	w->pidfd = -1;
	w->kernel = 0;
}

static int
on_claim(struct monitor *m, const struct priv_kill_kernel *k)
{
	char why[PRIV_REASON_MAX - 40];
	int pidfd;
	struct mworker *w = live_worker(m, PRIV_CLAIM_KERNEL, k->worker);

	if (w == NULL)
		return 0;
	int rc = m->ops->claim_kernel(m->ctx, w->pid, k->kernel_pid, &pidfd, why, sizeof(why));
	if (rc == -1)
		return refuse(m, PRIV_CLAIM_KERNEL, k->worker, "%s", why); /* names the pid */
	if (w->pidfd != -1)
		close(w->pidfd);
	w->pidfd = pidfd;
	w->kernel = rc == 1 ? k->kernel_pid : 0;
	return 0;
}

static int
on_kill_kernel(struct monitor *m, const struct priv_kill_kernel *k)
{
	struct mworker *w = live_worker(m, PRIV_KILL_KERNEL, k->worker);

	if (w == NULL)
		return 0;
	if (w->pidfd == -1 || w->kernel != k->kernel_pid)
		return refuse(m, PRIV_KILL_KERNEL, k->worker,
			      "pid %d is not the kernel claimed for worker %u", (int)k->kernel_pid,
			      k->worker);
	kill_kernel_of(m, w);
	return 0;
}

static int
on_end(struct monitor *m, const struct priv_end_worker *e)
{
	struct mworker *w = live_worker(m, PRIV_END_WORKER, e->worker);

	if (w == NULL)
		return 0;
	m->ops->kill_worker(m->ctx, w->pid);
	kill_kernel_of(m, w);
	return 0;
}

static int
on_egress_bind(struct monitor *m, const struct priv_egress_bind *b)
{
	struct mworker *w = live_worker(m, PRIV_EGRESS_BIND, b->worker);

	if (w != NULL)
		m->ops->egress_bind(m->ctx, w->pid, b->session, b->identity);
	return 0;
}

/* Remove the directory of reaped worker `w` and forget `w`: nothing more can name it. */
static void
remove_dir_of(struct monitor *m, struct mworker *w)
{
	m->ops->remove_dir(m->ctx, w->dir);
	free(w->dir);
	for (struct mworker **pp = &m->workers; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			free(w);
			break;
		}
	}
}

static int
on_remove(struct monitor *m, const struct priv_remove_dir *r)
{
	struct mworker *w = by_dir(m, r->dir);

	if (w == NULL)
		return refuse(m, PRIV_REMOVE_SESSION_DIR, r->dir, "directory %u was never made",
			      r->dir);
	if (w->dir == NULL)
		return refuse(m, PRIV_REMOVE_SESSION_DIR, r->dir, "directory %u is removed already",
			      r->dir);
	/* A session closed just after its worker was told to end (hibernation):
	 * the directory goes once that worker is reaped, never under it. */
	if (w->live) {
		w->remove_at_exit = 1;
		return 0;
	}
	remove_dir_of(m, w);
	return 0;
}

/* Start copying directory `f->dir` for a fork; fork_exited answers. */
static int
on_fork(struct monitor *m, const struct priv_fork_dir *f)
{
	char why[PRIV_REASON_MAX - 40];
	struct mworker *src = by_dir(m, f->dir);

	if (src == NULL || src->dir == NULL)
		return refuse(m, PRIV_FORK_DIR, f->seq,
			      "directory %u was never made or is removed", f->dir);
	if (m->ops->fork_dir == NULL)
		return refuse(m, PRIV_FORK_DIR, f->seq, "forks are not offered");
	if (kept_dirs(m) >= m->max_kept)
		return refuse(m, PRIV_FORK_DIR, f->seq, "%d session directories are not "
			      "removed yet", kept_dirs(m));
	struct mfork *c = xcalloc(1, sizeof(*c));
	if (m->ops->fork_dir(m->ctx, src->dir, &c->job, why, sizeof(why)) == -1) {
		free(c);
		return refuse(m, PRIV_FORK_DIR, f->seq, "%s", why);
	}
	c->seq = f->seq;
	c->next = m->forks;
	m->forks = c;
	return 0;
}

/* The copy `c` ended: keep it as a reaped worker's directory and answer. */
static int
fork_answer(struct monitor *m, struct mfork *c, int status)
{
	char why[PRIV_REASON_MAX - 40];
	struct fs_copy_stats st;

	if (m->ops->fork_done(m->ctx, &c->job, status, &st, why, sizeof(why)) == -1)
		return refuse(m, PRIV_FORK_DIR, c->seq, "%s", why);
	struct mworker *w = xcalloc(1, sizeof(*w));
	w->id = m->next_id++;
	w->dir_id = m->next_id++;
	w->pidfd = -1;
	w->rescue = -1;
	w->dir = c->job.dir;
	w->uid = c->job.uid;
	w->next = m->workers;
	m->workers = w;
	struct priv_msg r = {.type = PRIV_DIR_FORKED};
	uint64_t bytes = (uint64_t)st.bytes;
	r.u.forked = (struct priv_dir_forked){c->seq,		      w->dir_id,
					      (uint32_t)w->uid,	      {0},
					      (uint32_t)(bytes >> 32), (uint32_t)bytes,
					      (uint32_t)st.files,     (uint32_t)st.skipped};
	memcpy(r.u.forked.name, c->job.name, sizeof(c->job.name));
	return monitor_send(m, &r, -1);
}

/* Reaped copy `pid`: answer its FORK_DIR. 1 if it was one, else 0. */
static int
fork_exited(struct monitor *m, pid_t pid, int status)
{
	for (struct mfork **pp = &m->forks; *pp; pp = &(*pp)->next) {
		struct mfork *c = *pp;
		if (c->job.pid != pid)
			continue;
		*pp = c->next;
		if (c->stale) {
			fork_discard(m, c, status);
			return 1;
		}
		fork_answer(m, c, status);
		free(c);
		return 1;
	}
	return 0;
}

static int
on_preprocess(struct monitor *m, const struct priv_preprocess *q, int code_fd)
{
	char why[PRIV_REASON_MAX - 40];
	struct mpre *p;

	if (m->pre_max == 0 || m->ops->preprocess == NULL)
		return refuse(m, PRIV_PREPROCESS, q->seq, "preprocess_command is not set");
	for (p = m->pres; p; p = p->next)
		if (p->seq == q->seq)
			return refuse(m, PRIV_PREPROCESS, q->seq,
				      "request %u is running already", q->seq);
	if (monitor_preprocessing(m) >= m->pre_max)
		return refuse(m, PRIV_PREPROCESS, q->seq, "%d preprocess_commands run already, "
			      "the most allowed", m->pre_max);
	p = xcalloc(1, sizeof(*p));
	if (m->ops->preprocess(m->ctx, q, code_fd, &p->pid, &p->out, &p->err, why,
			       sizeof(why)) == -1) {
		free(p);
		return refuse(m, PRIV_PREPROCESS, q->seq, "cannot run preprocess_command: %s",
			      why);
	}
	p->seq = q->seq;
	p->deadline = clock_mono() + m->pre_timeout_s;
	p->next = m->pres;
	m->pres = p;
	return 0;
}

void
monitor_tick(struct monitor *m)
{
	double now = clock_mono();

	for (struct mpre *p = m->pres; p; p = p->next)
		if (!p->timed_out && now >= p->deadline) {
			log_warnx("preprocess_command %d (request %u) ran %d s: killing it",
				  (int)p->pid, p->seq, m->pre_timeout_s);
			p->timed_out = 1;
			m->ops->kill_group(m->ctx, p->pid);
		}
}

/* How reaped command `p` ended, judged by the parent, not by the command. */
static enum priv_pp_outcome
pre_outcome(const struct monitor *m, const struct mpre *p, int status)
{
	struct stat st;

	if (p->timed_out)
		return PRIV_PP_TIMEOUT;
	/* RLIMIT_FSIZE stops a write past the bound with SIGXFSZ. */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
		return PRIV_PP_TOO_BIG;
	if ((fstat(p->out, &st) == 0 && st.st_size > m->pre_max_bytes) ||
	    (fstat(p->err, &st) == 0 && st.st_size > m->pre_max_bytes))
		return PRIV_PP_TOO_BIG;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? PRIV_PP_OK : PRIV_PP_FAILED;
}

/* Reaped preprocess_command `pid`: tell the front. 1 if it was one, else 0. */
static int
pre_exited(struct monitor *m, pid_t pid, int status)
{
	for (struct mpre **pp = &m->pres; *pp; pp = &(*pp)->next) {
		struct mpre *p = *pp;
		if (p->pid != pid)
			continue;
		*pp = p->next;
		/* What it started in its group must not outlive it. */
		m->ops->kill_group(m->ctx, p->pid);
		enum priv_pp_outcome o = pre_outcome(m, p, status);
		struct priv_msg r = {.type = PRIV_PREPROCESSED};
		r.u.pred = (struct priv_preprocessed){p->seq, status, (uint32_t)o};
		int fd = o == PRIV_PP_OK ? p->out : p->err;
		lseek(fd, 0, SEEK_SET);
		if (!p->stale)
			monitor_send(m, &r, fd);
		close(p->out);
		close(p->err);
		free(p);
		return 1;
	}
	return 0;
}

int
monitor_request(struct monitor *m)
{
	struct priv_msg r;
	char err[PRIV_ERR_LEN];
	int fd;

	if (m->broken)
		return -1;
	int rc = priv_msg_recv(m->front, &r, &fd, err, sizeof(err));
	if (rc == 0)
		return -1;
	if (rc == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		log_warn("read from the front");
		return -1;
	}
	if (rc == -2)
		return refuse(m, r.type, 0, "malformed: %s", err);
	switch (r.type) {
	case PRIV_SPAWN_WORKER:
		return on_spawn(m, &r.u.spawn);
	case PRIV_END_WORKER:
		return on_end(m, &r.u.end);
	case PRIV_CLAIM_KERNEL:
		return on_claim(m, &r.u.kill);
	case PRIV_KILL_KERNEL:
		return on_kill_kernel(m, &r.u.kill);
	case PRIV_REMOVE_SESSION_DIR:
		return on_remove(m, &r.u.remove);
	case PRIV_FORK_DIR:
		return on_fork(m, &r.u.fork);
	case PRIV_EGRESS_BIND:
		return on_egress_bind(m, &r.u.bind);
	case PRIV_PREPROCESS: {
		int rc2 = on_preprocess(m, &r.u.pre, fd);
		close(fd);
		return rc2;
	}
	default:
		if (fd != -1)
			close(fd);
		return refuse(m, r.type, 0, "a message only the parent sends");
	}
}

int
monitor_child_exited(struct monitor *m, pid_t pid, int status)
{
	if (pre_exited(m, pid, status) || fork_exited(m, pid, status))
		return 1;
	for (struct mworker *w = m->workers; w; w = w->next) {
		if (w->pid != pid || !w->live)
			continue;
		w->live = 0;
		if (w->rescue != -1)
			close(w->rescue);
		w->rescue = -1;
		/* The kernel is in its own process group; never leave it behind. */
		kill_kernel_of(m, w);
		m->ops->worker_gone(m->ctx, pid);
		struct priv_msg r = {.type = PRIV_WORKER_EXITED};
		r.u.exited = (struct priv_worker_exited){w->id, status};
		monitor_send(m, &r, -1);
		if (w->dir && (w->remove_at_exit || (m->broken && !m->persist)))
			remove_dir_of(m, w);
		return 1;
	}
	return 0;
}

int
monitor_end_all(struct monitor *m)
{
	int n = 0;

	for (struct mworker *w = m->workers; w; w = w->next) {
		if (!w->live)
			continue;
		m->ops->kill_worker(m->ctx, w->pid);
		kill_kernel_of(m, w);
		n++;
	}
	for (struct mpre *p = m->pres; p; p = p->next)
		m->ops->kill_group(m->ctx, p->pid);
	for (struct mfork *c = m->forks; c; c = c->next)
		m->ops->kill_group(m->ctx, c->job.pid);
	return n;
}

void
monitor_front_gone(struct monitor *m)
{
	struct mworker *w = m->workers, *next;

	m->broken = 1;
	if (m->persist) /* the next front, or the next start, has them */
		return;
	for (; w; w = next) {
		next = w->next;
		if (!w->live && w->dir)
			remove_dir_of(m, w);
	}
}
