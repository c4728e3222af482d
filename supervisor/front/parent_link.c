/* parent_link.c - see parent_link.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "log.h"
#include "parent_link.h"
#include "secret_file.h"
#include "xmalloc.h"

/* How long a fork's copy may take the parent before the front gives up. */
#define FORK_WAIT_S 600

/* A message kept while a spawn waited. */
struct kept {
	struct kept *next;
	struct priv_msg m;
	int fd;
};

static int link_fd = -1;
static struct kept *kept_head, **kept_tail = &kept_head;
static uint32_t next_seq = 1;
static int gone;

void
parent_link_init(int sock)
{
	link_fd = sock;
}

int
parent_link_fd(void)
{
	return link_fd;
}

static void
send_or_log(const struct priv_msg *m)
{
	if (priv_msg_send(link_fd, m, -1) == -1)
		log_warn("send %s to the privileged parent", priv_type_name(m->type));
}

void
parent_link_end_worker(uint32_t worker)
{
	struct priv_msg m = {.type = PRIV_END_WORKER, .u.end = {worker}};
	send_or_log(&m);
}

void
parent_link_claim_kernel(uint32_t worker, pid_t kernel)
{
	struct priv_msg m = {.type = PRIV_CLAIM_KERNEL, .u.kill = {worker, (int32_t)kernel}};
	send_or_log(&m);
}

void
parent_link_kill_kernel(uint32_t worker, pid_t kernel)
{
	struct priv_msg m = {.type = PRIV_KILL_KERNEL, .u.kill = {worker, (int32_t)kernel}};
	send_or_log(&m);
}

void
parent_link_remove_dir(uint32_t dir)
{
	struct priv_msg m = {.type = PRIV_REMOVE_SESSION_DIR, .u.remove = {dir}};
	send_or_log(&m);
}

void
parent_link_egress_bind(uint32_t worker, const char *session, const char *identity)
{
	struct priv_msg m = {.type = PRIV_EGRESS_BIND, .u.bind = {.worker = worker}};
	char *id = m.u.bind.identity;

	snprintf(m.u.bind.session, sizeof(m.u.bind.session), "%s", session);
	snprintf(id, sizeof(m.u.bind.identity), "%s", identity[0] ? identity : "-");
	for (char *p = id; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	send_or_log(&m);
}

/* Read one message, waiting up to `ms` (-1: as long as it takes). 1, 0
 * (none in time), or -1 (the parent is gone; logged once). */
static int
receive(struct priv_msg *m, int *fd, int ms)
{
	char why[PRIV_ERR_LEN];
	struct pollfd p = {.fd = link_fd, .events = POLLIN};

	for (;;) {
		if (gone)
			return -1;
		int n = poll(&p, 1, ms);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0)
			return 0;
		int rc = priv_msg_recv(link_fd, m, fd, why, sizeof(why));
		if (rc == 1)
			return 1;
		if (rc == -2) {
			/* The parent is trusted; a malformed record is a bug to see. */
			log_warnx("a malformed message from the privileged parent: %s", why);
			continue;
		}
		if (rc == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (rc == -1)
			log_warn("read from the privileged parent");
		else
			log_warnx("the privileged parent is gone");
		gone = 1;
		return -1;
	}
}

static void
keep(const struct priv_msg *m, int fd)
{
	struct kept *k = xcalloc(1, sizeof(*k));
	k->m = *m;
	k->fd = fd;
	*kept_tail = k;
	kept_tail = &k->next;
}

void
parent_link_secrets(void)
{
	struct priv_msg m;
	int fd;

	for (;;) {
		if (receive(&m, &fd, -1) != 1)
			fatalx("the privileged parent is gone before it sent the secret files");
		if (m.type == PRIV_SECRETS_SENT)
			return;
		if (m.type == PRIV_SECRET)
			secret_file_put(m.u.secret.path, fd);
		else
			keep(&m, fd);
	}
}

int
parent_link_spawn(enum net_mode mode, uint32_t dir, struct priv_worker_started *st, int *fd,
		  char *why, size_t why_len)
{
	struct priv_msg m = {.type = PRIV_SPAWN_WORKER, .u.spawn = {next_seq++, mode, dir}};
	uint32_t seq = m.u.spawn.seq;
	int got;

	if (next_seq == 0)
		next_seq = 1;
	if (priv_msg_send(link_fd, &m, -1) == -1)
		return err_set(why, why_len, "send SPAWN_WORKER to the privileged parent: %s",
			       strerror(errno));
	for (;;) {
		if (receive(&m, &got, -1) != 1)
			return err_set(why, why_len, "the privileged parent is gone");
		if (m.type == PRIV_WORKER_STARTED && m.u.started.seq == seq) {
			*st = m.u.started;
			*fd = got;
			return 0;
		}
		if (m.type == PRIV_REFUSED && m.u.refused.request == PRIV_SPAWN_WORKER &&
		    m.u.refused.ref == seq)
			return err_set(why, why_len, "the privileged parent refused: %s",
				       m.u.refused.reason);
		keep(&m, got);
	}
}

int
parent_link_next(struct priv_msg *m, int *fd)
{
	if (kept_head) {
		struct kept *k = kept_head;
		kept_head = k->next;
		if (kept_head == NULL)
			kept_tail = &kept_head;
		*m = k->m;
		*fd = k->fd;
		free(k);
		return 1;
	}
	return receive(m, fd, 0);
}

/* ---- PREPROCESS and FORK_DIR: asked by HTTP threads, answered through the main loop ---- */

/* One HTTP thread waiting for its PREPROCESSED or DIR_FORKED. */
struct pre_wait {
	struct pre_wait *next;
	uint32_t seq;
	int done;	 /* the answer is in */
	struct priv_msg m;
	int fd;		 /* PREPROCESSED's file, or -1 */
};

static pthread_mutex_t pre_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pre_cond = PTHREAD_COND_INITIALIZER;
static struct pre_wait *pre_waits;
static uint32_t pre_next_seq = 1;

static int await(struct pre_wait *w, double deadline);

/* Whether `m` answers a waiting request (PREPROCESS, FORK_DIR): 1 with its *seq. */
static int
answers(const struct priv_msg *m, uint32_t *seq)
{
	if (m->type == PRIV_PREPROCESSED)
		*seq = m->u.pred.seq;
	else if (m->type == PRIV_DIR_FORKED)
		*seq = m->u.forked.seq;
	else if (m->type == PRIV_REFUSED && (m->u.refused.request == PRIV_PREPROCESS ||
					     m->u.refused.request == PRIV_FORK_DIR))
		*seq = m->u.refused.ref;
	else
		return 0;
	return 1;
}

int
parent_link_deliver(const struct priv_msg *m, int fd)
{
	uint32_t seq;

	if (!answers(m, &seq))
		return 0;
	pthread_mutex_lock(&pre_mu);
	struct pre_wait *w = pre_waits;
	while (w && w->seq != seq)
		w = w->next;
	int orphan = w == NULL || w->done;
	if (!orphan) {
		w->m = *m;
		w->fd = fd;
		w->done = 1;
		pthread_cond_broadcast(&pre_cond);
		fd = -1;
	}
	pthread_mutex_unlock(&pre_mu);
	/* Its caller gave up (or a refusal of a malformed request, seq 0). */
	if (fd != -1)
		close(fd);
	/* A copy made for a fork no one waits for any more is no one's. */
	if (orphan && m->type == PRIV_DIR_FORKED)
		parent_link_remove_dir(m->u.forked.dir);
	return 1;
}

/* Put `w` among the waiting requests under a new seq, which it returns. */
static uint32_t
wait_join(struct pre_wait *w)
{
	pthread_mutex_lock(&pre_mu);
	w->seq = pre_next_seq++;
	if (pre_next_seq == 0)
		pre_next_seq = 1;
	w->next = pre_waits;
	pre_waits = w;
	pthread_mutex_unlock(&pre_mu);
	return w->seq;
}

/* Wait (sent: 1) up to `seconds` for w's answer, then take w out. 1 if it came. */
static int
wait_leave(struct pre_wait *w, int sent, double seconds)
{
	pthread_mutex_lock(&pre_mu);
	int answered = sent && await(w, clock_mono() + seconds);
	for (struct pre_wait **pp = &pre_waits; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	pthread_mutex_unlock(&pre_mu);
	return answered;
}

/* A memfd holding `code`, read from its start. -1 with why. */
static int
code_file(const char *code, size_t len, char *why, size_t why_len)
{
	int fd = memfd_create("codeexecd-code", MFD_CLOEXEC);

	if (fd == -1)
		return err_set(why, why_len, "memfd_create for the code: %s", strerror(errno));
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, code + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			err_set(why, why_len, "write the code to its memfd: %s", strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		err_set(why, why_len, "rewind the code's memfd: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The whole of file `fd` (at most max bytes) as a string of *len bytes;
 * NULL with why. */
static char *
slurp(int fd, long max, size_t *len, char *why, size_t why_len)
{
	struct stat st;

	if (fstat(fd, &st) == -1) {
		err_set(why, why_len, "fstat the output: %s", strerror(errno));
		return NULL;
	}
	if (st.st_size > max) {
		err_set(why, why_len, "the output is %lld bytes, more than %ld",
			(long long)st.st_size, max);
		return NULL;
	}
	char *text = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, text + got, (size_t)st.st_size - got, (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* it shrank: keep what was read */
		got += (size_t)n;
	}
	text[got] = '\0';
	*len = got;
	return text;
}

/* Wait for `w` to be answered, up to `deadline` (monotonic). 1 or 0. */
static int
await(struct pre_wait *w, double deadline)
{
	while (!w->done) {
		double left = deadline - clock_mono();
		if (left <= 0)
			return 0;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)left;
		ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&pre_cond, &pre_mu, &ts);
	}
	return 1;
}

/* "exited with status 1", "was killed by signal 9". */
static void
describe(int status, char *out, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(out, cap, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(out, cap, "was killed by signal %d", WTERMSIG(status));
}

/*
 * The code to run out of PREPROCESSED `p` and its file `fd` (borrowed):
 * the command's stdout, or NULL with why saying how it failed, its stderr
 * included.
 */
static char *
pre_result(const struct priv_preprocessed *p, int fd, int timeout_s, long max_bytes, char *why,
	   size_t why_len)
{
	char how[64], err2[PRIV_ERR_LEN];
	size_t text_len;
	char *text = slurp(fd, max_bytes, &text_len, err2, sizeof(err2));

	if (p->outcome == PRIV_PP_OK) {
		if (text == NULL)
			err_set(why, why_len, "preprocess_command: %s", err2);
		else if (text_len != strlen(text)) {
			err_set(why, why_len, "preprocess_command wrote a NUL byte: no Python code");
			free(text);
			return NULL;
		}
		return text;
	}
	describe(p->status, how, sizeof(how));
	const char *stderr_text = text && text[0] ? text : "(nothing on stderr)";
	switch (p->outcome) {
	case PRIV_PP_TIMEOUT:
		err_set(why, why_len, "preprocess_command timed out after %d s "
			"(preprocess_timeout_s) and was killed; its stderr: %s", timeout_s,
			stderr_text);
		break;
	case PRIV_PP_TOO_BIG:
		err_set(why, why_len, "preprocess_command wrote more than %ld bytes "
			"(preprocess_max_bytes) and was stopped", max_bytes);
		break;
	default:
		err_set(why, why_len, "preprocess_command %s: %s", how, stderr_text);
	}
	free(text);
	return NULL;
}

/* Make `s` printable ASCII for the wire, not empty. */
static void
printable(char *out, size_t cap, const char *s)
{
	snprintf(out, cap, "%s", s[0] ? s : "anonymous");
	for (char *p = out; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

char *
parent_link_preprocess(const char *session, const char *identity, const char *code,
		       int timeout_s, long max_bytes, char *why, size_t why_len)
{
	struct priv_msg m = {.type = PRIV_PREPROCESS};
	struct pre_wait w = {.fd = -1};
	char *text = NULL;

	snprintf(m.u.pre.session, sizeof(m.u.pre.session), "%s", session);
	printable(m.u.pre.identity, sizeof(m.u.pre.identity), identity);
	int code_fd = code_file(code, strlen(code), why, why_len);
	if (code_fd == -1)
		return NULL;
	m.u.pre.seq = wait_join(&w);
	/* A SOCK_SEQPACKET record goes whole: other threads' sends do not mix in. */
	int sent = priv_msg_send(link_fd, &m, code_fd);
	int saved = errno;
	close(code_fd);
	/* The parent kills it at timeout_s and answers at once; the rest is slack
	 * for a parent that never answers. */
	int answered = wait_leave(&w, sent == 0, timeout_s + 10);

	if (sent == -1)
		err_set(why, why_len, "send PREPROCESS to the privileged parent: %s",
			strerror(saved));
	else if (!answered)
		err_set(why, why_len, "preprocess_command: no answer from the privileged parent "
			"in %d s", timeout_s + 10);
	else if (w.m.type == PRIV_REFUSED)
		err_set(why, why_len, "preprocess_command: the privileged parent refused: %s",
			w.m.u.refused.reason);
	else
		text = pre_result(&w.m.u.pred, w.fd, timeout_s, max_bytes, why, why_len);
	if (w.fd != -1)
		close(w.fd);
	return text;
}

int
parent_link_fork_dir(uint32_t dir, struct priv_dir_forked *out, char *why, size_t why_len)
{
	struct priv_msg m = {.type = PRIV_FORK_DIR};
	struct pre_wait w = {.fd = -1};

	m.u.fork.dir = dir;
	m.u.fork.seq = wait_join(&w);
	int sent = priv_msg_send(link_fd, &m, -1);
	int saved = errno;
	int answered = wait_leave(&w, sent == 0, FORK_WAIT_S);

	if (w.fd != -1)
		close(w.fd);
	if (sent == -1)
		return err_set(why, why_len, "send FORK_DIR to the privileged parent: %s",
			       strerror(saved));
	if (!answered)
		return err_set(why, why_len, "no answer from the privileged parent in %d s",
			       FORK_WAIT_S);
	if (w.m.type == PRIV_REFUSED)
		return err_set(why, why_len, "%s", w.m.u.refused.reason);
	*out = w.m.u.forked;
	return 0;
}
