/* priv_msg.c - see priv_msg.h. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fdpass.h"
#include "priv_msg.h"

/* What a field is on the wire, and the bounds the codec checks. */
enum kind {
	K_ID,	   /* uint32_t, nonzero: an id or a seq */
	K_U32,	   /* uint32_t, any */
	K_U16,	   /* uint16_t, any */
	K_PID,	   /* int32_t, > 1 (never init, never a group: no 0 or negative) */
	K_STATUS,  /* int32_t, a wait status of a dead child */
	K_NETMODE, /* enum net_mode, as 4 bytes */
	K_REASON,  /* char[PRIV_REASON_MAX]: the rest of the record, 1.. bytes, no NUL */
	K_NAME,	   /* char[PRIV_NAME_LEN + 1]: PRIV_NAME_LEN lowercase hex digits */
	K_SESSION, /* char[PRIV_SESSION_LEN + 1]: PRIV_SESSION_LEN lowercase hex digits */
	K_OUTCOME, /* uint32_t, an enum priv_pp_outcome */
	K_SIDECAR, /* uint32_t, an index of cfg->sidecars: below SIDECARS_MAX */
	K_SCSTATE, /* uint32_t, an enum priv_sidecar_run */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off;
};

#define F(type, member, kind) {#member, kind, offsetof(struct type, member)}

static const struct field spawn_fields[] = {
	F(priv_spawn_worker, seq, K_ID), F(priv_spawn_worker, network_mode, K_NETMODE),
	F(priv_spawn_worker, dir, K_U32), {0}};
static const struct field end_fields[] = {F(priv_end_worker, worker, K_ID), {0}};
static const struct field kill_fields[] = {
	F(priv_kill_kernel, worker, K_ID), F(priv_kill_kernel, kernel_pid, K_PID), {0}};
static const struct field remove_fields[] = {F(priv_remove_dir, dir, K_ID), {0}};
static const struct field started_fields[] = {
	F(priv_worker_started, seq, K_ID), F(priv_worker_started, worker, K_ID),
	F(priv_worker_started, dir, K_ID), F(priv_worker_started, pid, K_PID),
	F(priv_worker_started, uid, K_U32), F(priv_worker_started, name, K_NAME), {0}};
static const struct field exited_fields[] = {
	F(priv_worker_exited, worker, K_ID), F(priv_worker_exited, status, K_STATUS), {0}};
static const struct field refused_fields[] = {
	F(priv_refused, request, K_U16), F(priv_refused, ref, K_U32),
	F(priv_refused, reason, K_REASON), {0}};
static const struct field renewed_fields[] = {{0}};
static const struct field pre_fields[] = {
	F(priv_preprocess, seq, K_ID), F(priv_preprocess, session, K_SESSION),
	F(priv_preprocess, identity, K_REASON), {0}};
static const struct field pred_fields[] = {
	F(priv_preprocessed, seq, K_ID), F(priv_preprocessed, status, K_STATUS),
	F(priv_preprocessed, outcome, K_OUTCOME), {0}};
static const struct field sidecar_fields[] = {
	F(priv_sidecar_state, index, K_SIDECAR), F(priv_sidecar_state, state, K_SCSTATE),
	F(priv_sidecar_state, pid, K_U32), F(priv_sidecar_state, restarts, K_U32),
	F(priv_sidecar_state, started, K_U32), F(priv_sidecar_state, rss_kb, K_U32),
	F(priv_sidecar_state, port, K_U32), {0}};
static const struct field degraded_fields[] = {F(priv_degraded, reason, K_REASON), {0}};
static const struct field secret_fields[] = {F(priv_secret, path, K_REASON), {0}};
static const struct field left_fields[] = {
	F(priv_dir_left, dir, K_ID), F(priv_dir_left, uid, K_U32), F(priv_dir_left, name, K_NAME),
	{0}};
static const struct field wleft_fields[] = {
	F(priv_worker_left, worker, K_ID), F(priv_worker_left, dir, K_ID),
	F(priv_worker_left, pid, K_PID), F(priv_worker_left, uid, K_U32),
	F(priv_worker_left, kernel, K_U32), F(priv_worker_left, name, K_NAME), {0}};
static const struct field fork_fields[] = {
	F(priv_fork_dir, seq, K_ID), F(priv_fork_dir, dir, K_ID), {0}};
static const struct field bind_fields[] = {
	F(priv_egress_bind, worker, K_ID), F(priv_egress_bind, session, K_SESSION),
	F(priv_egress_bind, identity, K_REASON), {0}};
static const struct field forked_fields[] = {
	F(priv_dir_forked, seq, K_ID), F(priv_dir_forked, dir, K_ID),
	F(priv_dir_forked, uid, K_U32), F(priv_dir_forked, name, K_NAME),
	F(priv_dir_forked, bytes_hi, K_U32), F(priv_dir_forked, bytes_lo, K_U32),
	F(priv_dir_forked, files, K_U32), F(priv_dir_forked, skipped, K_U32), {0}};

static const struct {
	unsigned type;
	const char *name;
	const struct field *fields;
} types[] = {
	{PRIV_SPAWN_WORKER, "SPAWN_WORKER", spawn_fields},
	{PRIV_END_WORKER, "END_WORKER", end_fields},
	{PRIV_KILL_KERNEL, "KILL_KERNEL", kill_fields},
	{PRIV_REMOVE_SESSION_DIR, "REMOVE_SESSION_DIR", remove_fields},
	{PRIV_CLAIM_KERNEL, "CLAIM_KERNEL", kill_fields},
	{PRIV_PREPROCESS, "PREPROCESS", pre_fields},
	{PRIV_WORKER_STARTED, "WORKER_STARTED", started_fields},
	{PRIV_WORKER_EXITED, "WORKER_EXITED", exited_fields},
	{PRIV_REFUSED, "REFUSED", refused_fields},
	{PRIV_RUNTIME_RENEWED, "RUNTIME_RENEWED", renewed_fields},
	{PRIV_RUNTIME_DEGRADED, "RUNTIME_DEGRADED", degraded_fields},
	{PRIV_PREPROCESSED, "PREPROCESSED", pred_fields},
	{PRIV_SIDECAR_STATE, "SIDECAR_STATE", sidecar_fields},
	{PRIV_SECRET, "SECRET", secret_fields},
	{PRIV_SECRETS_SENT, "SECRETS_SENT", renewed_fields},
	{PRIV_DIR_LEFT, "DIR_LEFT", left_fields},
	{PRIV_FORK_DIR, "FORK_DIR", fork_fields},
	{PRIV_EGRESS_BIND, "EGRESS_BIND", bind_fields},
	{PRIV_DIR_FORKED, "DIR_FORKED", forked_fields},
	{PRIV_WORKER_LEFT, "WORKER_LEFT", wleft_fields},
};

static const struct field *
fields_of(unsigned type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return types[i].fields;
	return NULL;
}

const char *
priv_type_name(unsigned type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return types[i].name;
	return "unknown";
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t
width(enum kind k)
{
	return k == K_U16 ? 2 : k == K_REASON ? 0 : k == K_NAME ? PRIV_NAME_LEN
					    : k == K_SESSION ? PRIV_SESSION_LEN : 4;
}

/* A wait status of a child that is dead: exited, or killed by a signal. */
static int
is_death_status(int32_t s)
{
	if (s < 0 || s > 0xffff || (s & 0x7f) == 0x7f)
		return 0; /* not 16 bits, or stopped or continued */
	/* exited: code << 8, low byte 0; killed: signal (| 0x80 with core), high byte 0 */
	return (s & 0x7f) == 0 ? (s & 0xff) == 0 : (s >> 8) == 0;
}

/* Check one decoded (or to-be-encoded) value at `at`: 0, or -1 with why. */
static int
check(const char *tname, const struct field *f, const char *at, char *why, size_t why_len)
{
	int32_t i;
	uint32_t u;

	switch (f->kind) {
	case K_ID:
		memcpy(&u, at, 4);
		if (u == 0)
			return err_set(why, why_len, "%s: %s: 0 is no id", tname, f->name);
		return 0;
	case K_PID:
		memcpy(&i, at, 4);
		if (i <= 1)
			return err_set(why, why_len, "%s: %s: %d is no process of ours", tname,
				       f->name, i);
		return 0;
	case K_STATUS:
		memcpy(&i, at, 4);
		if (!is_death_status(i))
			return err_set(why, why_len,
				       "%s: %s: %d is no wait status of a dead child", tname,
				       f->name, i);
		return 0;
	case K_NETMODE: {
		enum net_mode m;
		memcpy(&m, at, sizeof(m));
		if ((unsigned)m > NET_SECCOMP)
			return err_set(why, why_len, "%s: %s: %u is no network mode", tname,
				       f->name, (unsigned)m);
		return 0;
	}
	case K_REASON: {
		size_t n = strnlen(at, PRIV_REASON_MAX);
		if (n == 0 || n == PRIV_REASON_MAX)
			return err_set(why, why_len, "%s: %s: empty or longer than %d bytes",
				       tname, f->name, PRIV_REASON_MAX - 1);
		for (size_t k = 0; k < n; k++)
			if (at[k] < 0x20 || at[k] > 0x7e)
				return err_set(why, why_len,
					       "%s: %s: byte %zu is not printable ASCII", tname,
					       f->name, k);
		return 0;
	}
	case K_NAME:
		if (strnlen(at, PRIV_NAME_LEN + 1) != PRIV_NAME_LEN ||
		    strspn(at, "0123456789abcdef") != PRIV_NAME_LEN)
			return err_set(why, why_len, "%s: %s: not %d lowercase hex digits", tname,
				       f->name, PRIV_NAME_LEN);
		return 0;
	case K_SESSION:
		if (strnlen(at, PRIV_SESSION_LEN + 1) != PRIV_SESSION_LEN ||
		    strspn(at, "0123456789abcdef") != PRIV_SESSION_LEN)
			return err_set(why, why_len, "%s: %s: not %d lowercase hex digits", tname,
				       f->name, PRIV_SESSION_LEN);
		return 0;
	case K_OUTCOME:
		memcpy(&u, at, 4);
		if (u > PRIV_PP_TOO_BIG)
			return err_set(why, why_len, "%s: %s: %u is no outcome", tname, f->name,
				       u);
		return 0;
	case K_SIDECAR:
		memcpy(&u, at, 4);
		if (u >= PRIV_SIDECARS_MAX)
			return err_set(why, why_len, "%s: %s: %u is no sidecar", tname, f->name, u);
		return 0;
	case K_SCSTATE:
		memcpy(&u, at, 4);
		if (u > PRIV_SC_STOPPED)
			return err_set(why, why_len, "%s: %s: %u is no sidecar state", tname,
				       f->name, u);
		return 0;
	default:
		return 0;
	}
}

ssize_t
priv_msg_encode(const struct priv_msg *m, unsigned char *out, size_t cap, char *why,
		size_t why_len)
{
	const struct field *fs = fields_of(m->type);
	const char *base = (const char *)&m->u;
	size_t len = PRIV_HDR_LEN;

	if (fs == NULL)
		return err_set(why, why_len, "type %u: unknown", (unsigned)m->type);
	if (cap < PRIV_MSG_MAX)
		return err_set(why, why_len, "%s: buffer of %zu bytes is too small",
			       priv_type_name(m->type), cap);
	out[0] = PRIV_VERSION >> 8;
	out[1] = PRIV_VERSION & 0xff;
	out[2] = (unsigned char)(m->type >> 8);
	out[3] = (unsigned char)m->type;
	for (const struct field *f = fs; f->name; f++) {
		const char *at = base + f->off;
		uint32_t u;
		uint16_t h;

		if (check(priv_type_name(m->type), f, at, why, why_len) == -1)
			return -1;
		switch (f->kind) {
		case K_U16:
			memcpy(&h, at, 2);
			out[len] = (unsigned char)(h >> 8);
			out[len + 1] = (unsigned char)h;
			break;
		case K_NETMODE: {
			enum net_mode nm;
			memcpy(&nm, at, sizeof(nm));
			put32(out + len, (uint32_t)nm);
			break;
		}
		case K_REASON:
			memcpy(out + len, at, strlen(at));
			len += strlen(at);
			break;
		case K_NAME:
			memcpy(out + len, at, PRIV_NAME_LEN);
			break;
		case K_SESSION:
			memcpy(out + len, at, PRIV_SESSION_LEN);
			break;
		default:
			memcpy(&u, at, 4);
			put32(out + len, u);
		}
		len += width(f->kind);
	}
	return (ssize_t)len;
}

int
priv_msg_decode(const unsigned char *in, size_t len, struct priv_msg *m, char *why, size_t why_len)
{
	memset(m, 0, sizeof(*m));
	if (len < PRIV_HDR_LEN)
		return err_set(why, why_len, "a record of %zu bytes: shorter than a header", len);
	unsigned version = (unsigned)in[0] << 8 | in[1];
	m->type = (enum priv_type)((unsigned)in[2] << 8 | in[3]);
	if (version != PRIV_VERSION)
		return err_set(why, why_len, "%s: protocol version %u, not %u",
			       priv_type_name(m->type), version, PRIV_VERSION);
	const struct field *fs = fields_of(m->type);
	if (fs == NULL)
		return err_set(why, why_len, "type %u: unknown", (unsigned)m->type);
	const char *tname = priv_type_name(m->type);
	char *base = (char *)&m->u;
	size_t pos = PRIV_HDR_LEN;

	if (len > PRIV_MSG_MAX)
		return err_set(why, why_len, "%s: %zu bytes, more than %d", tname, len,
			       PRIV_MSG_MAX);
	for (const struct field *f = fs; f->name; f++) {
		char *at = base + f->off;
		size_t w = width(f->kind);

		if (f->kind == K_REASON) {
			size_t n = len - pos;
			if (n >= PRIV_REASON_MAX)
				return err_set(why, why_len, "%s: %s: longer than %d bytes", tname,
					       f->name, PRIV_REASON_MAX - 1);
			if (memchr(in + pos, 0, n))
				return err_set(why, why_len, "%s: %s: holds a NUL", tname,
					       f->name);
			memcpy(at, in + pos, n);
			at[n] = '\0';
			pos = len;
		} else {
			if (len - pos < w)
				return err_set(why, why_len, "%s: %zu bytes: truncated at %s",
					       tname, len, f->name);
			if (f->kind == K_NAME || f->kind == K_SESSION) {
				memcpy(at, in + pos, w);
				at[w] = '\0';
			} else if (f->kind == K_U16) {
				uint16_t h = (uint16_t)(in[pos] << 8 | in[pos + 1]);
				memcpy(at, &h, 2);
			} else if (f->kind == K_NETMODE) {
				uint32_t u = get32(in + pos);
				if (u > NET_SECCOMP)
					return err_set(why, why_len,
						       "%s: %s: %u is no network mode", tname,
						       f->name, u);
				enum net_mode nm = (enum net_mode)u;
				memcpy(at, &nm, sizeof(nm));
			} else {
				uint32_t u = get32(in + pos);
				memcpy(at, &u, 4);
			}
			pos += w;
		}
		if (check(tname, f, at, why, why_len) == -1)
			return -1;
	}
	if (pos != len)
		return err_set(why, why_len, "%s: %zu bytes, %zu expected", tname, len, pos);
	return 0;
}

/* A type whose descriptor is a regular file (a memfd), not a socket. */
static int
carries_file(unsigned type)
{
	return type == PRIV_PREPROCESS || type == PRIV_PREPROCESSED || type == PRIV_SECRET;
}

/* How many descriptors a type carries: its least and its most. */
static void
fds_of(unsigned type, int *least, int *most)
{
	*least = type == PRIV_WORKER_STARTED || type == PRIV_WORKER_LEFT || carries_file(type);
	*most = *least || type == PRIV_RUNTIME_RENEWED;
}

int
priv_record_send(int sock, const unsigned char *rec, size_t len, int fd)
{
	union fdpass_one ctl;
	struct iovec iov = {(void *)rec, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd != -1)
		fdpass_attach(&mh, &ctl, fd);
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n == -1 && errno == EINTR)
			continue;
		if (n >= 0)
			errno = EMSGSIZE; /* a seqpacket record goes whole or not at all */
		return -1;
	}
}

int
priv_msg_send(int sock, const struct priv_msg *m, int fd)
{
	unsigned char data[PRIV_MSG_MAX];
	int least, most;

	ssize_t len = priv_msg_encode(m, data, sizeof(data), NULL, 0);
	fds_of(m->type, &least, &most);
	if (len == -1 || (fd != -1) < least || (fd != -1) > most) {
		errno = EINVAL;
		return -1;
	}
	return priv_record_send(sock, data, (size_t)len, fd);
}

int
priv_msg_send_within(int sock, const struct priv_msg *m, int fd, int ms)
{
	double give_up = clock_mono() + ms / 1000.0;

	for (;;) {
		if (priv_msg_send(sock, m, fd) == 0)
			return 0;
		double left = give_up - clock_mono();
		if ((errno != EAGAIN && errno != EWOULDBLOCK) || left <= 0)
			return -1;
		struct pollfd p = {.fd = sock, .events = POLLOUT};
		if (poll(&p, 1, (int)(left * 1000) + 1) == -1 && errno != EINTR)
			return -1;
	}
}

int
priv_msg_recv(int sock, struct priv_msg *m, int *fd, char *why, size_t why_len)
{
	/* One byte more than a record may hold, so an oversized one shows. */
	unsigned char data[PRIV_MSG_MAX + 1];
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {data, sizeof(data)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ssize_t n;
	struct stat st;
	int least, most;

	*fd = -1;
	memset(m, 0, sizeof(*m));
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	int got, count = fdpass_take(&mh, &got);
	int rc = -2;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		err_set(why, why_len, "a record of more than %d bytes or descriptors",
			PRIV_MSG_MAX);
	else if (priv_msg_decode(data, (size_t)n, m, why, why_len) == -1)
		;
	else if (fds_of(m->type, &least, &most), count < least || count > most)
		err_set(why, why_len, "%s carries %d descriptors, where %d to %d belong",
			priv_type_name(m->type), count, least, most);
	else if (count == 1 && (fstat(got, &st) == -1 ||
				(carries_file(m->type) ? !S_ISREG(st.st_mode) : !S_ISSOCK(st.st_mode))))
		err_set(why, why_len, "%s with a descriptor that is not a %s",
			priv_type_name(m->type), carries_file(m->type) ? "regular file" : "socket");
	else
		rc = 1;
	if (rc == 1)
		*fd = got;
	else if (got != -1)
		close(got);
	return rc;
}
