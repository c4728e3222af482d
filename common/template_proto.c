/* template_proto.c - see template_proto.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netmode.h"
#include "template_proto.h"

/* What a 32-bit field may hold; the codec checks it both ways. */
enum kind {
	K_SEQ,	  /* nonzero */
	K_U32,	  /* any */
	K_PID,	  /* > 1 */
	K_STATUS, /* a wait status of a dead child */
	K_MODE,	  /* an enum net_mode */
	K_NCG,	  /* <= CGROUP_NCTL */
	K_NUNIX,  /* <= TPL_UNIX_FDS */
	K_STAGE,  /* < 64 */
	K_ERRNO,  /* < 4096 */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off;
};

#define F(type, member, kind) {#member, kind, offsetof(struct type, member)}

static const struct field attach_fields[] = {F(tpl_attach, worker, K_SEQ), {0}};
static const struct field spawn_fields[] = {
	F(tpl_spawn, seq, K_SEQ),	   F(tpl_spawn, mode, K_MODE),
	F(tpl_spawn, uid, K_U32),	   F(tpl_spawn, gid, K_U32),
	F(tpl_spawn, nofile, K_U32),	   F(tpl_spawn, fsize_mb, K_U32),
	F(tpl_spawn, n_cg_fds, K_NCG),	   F(tpl_spawn, n_unix_fds, K_NUNIX), {0}};
static const struct field ready_fields[] = {
	F(tpl_ready, pid, K_PID), F(tpl_ready, preloaded, K_U32), {0}};
static const struct field release_fields[] = {F(tpl_exited, pid, K_PID), {0}};
static const struct field forked_fields[] = {
	F(tpl_forked, worker, K_SEQ), F(tpl_forked, pid, K_PID), {0}};
static const struct field spawned_fields[] = {
	F(tpl_spawned, seq, K_SEQ), F(tpl_spawned, pid, K_PID), {0}};
static const struct field failed_fields[] = {
	F(tpl_failed, seq, K_SEQ), F(tpl_failed, stage, K_STAGE), F(tpl_failed, err, K_ERRNO),
	{0}};
static const struct field exited_fields[] = {
	F(tpl_exited, pid, K_PID), F(tpl_exited, status, K_STATUS), {0}};
static const struct field refused_fields[] = {F(tpl_refused, seq, K_SEQ), {0}};

static const struct {
	unsigned type;
	const char *name;
	const struct field *fields;
	int reason; /* a reason follows the fields */
} types[] = {
	{TPL_ATTACH, "ATTACH", attach_fields, 0},   {TPL_SPAWN, "SPAWN", spawn_fields, 0},
	{TPL_RELEASE, "RELEASE", release_fields, 0},
	{TPL_READY, "READY", ready_fields, 0},	    {TPL_FORKED, "FORKED", forked_fields, 0},	    {TPL_SPAWNED, "SPAWNED", spawned_fields, 0},
	{TPL_FAILED, "FAILED", failed_fields, 0},   {TPL_EXITED, "EXITED", exited_fields, 0},
	{TPL_REFUSED, "REFUSED", refused_fields, 1},
};

static int
type_index(unsigned type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return (int)i;
	return -1;
}

const char *
tpl_type_name(unsigned type)
{
	int i = type_index(type);
	return i < 0 ? "unknown" : types[i].name;
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

/* Exited (code << 8) or killed by a signal (| 0x80 with a core): 16 bits, never stopped. */
static int
is_death_status(int32_t s)
{
	if (s < 0 || s > 0xffff || (s & 0x7f) == 0x7f)
		return 0;
	return (s & 0x7f) == 0 ? (s & 0xff) == 0 : (s >> 8) == 0;
}

/* Whether value v fits field f: 0, or -1 with why. */
static int
check(const char *tname, const struct field *f, uint32_t v, char *why, size_t why_len)
{
	int32_t i = (int32_t)v;
	int bad;

	switch (f->kind) {
	case K_SEQ: bad = v == 0; break;
	case K_PID: bad = i <= 1; break;
	case K_STATUS: bad = !is_death_status(i); break;
	case K_MODE: bad = v > NET_SECCOMP; break;
	case K_NCG: bad = v > CGROUP_NCTL; break;
	case K_NUNIX: bad = v > TPL_UNIX_FDS; break;
	case K_STAGE: bad = v >= 64; break;
	case K_ERRNO: bad = v >= 4096; break;
	default: bad = 0;
	}
	if (bad)
		return err_set(why, why_len, "%s: %s: %d is out of bounds", tname, f->name, i);
	return 0;
}

/* A reason: 1..TPL_REASON_MAX-1 printable ASCII bytes. */
static int
check_reason(const char *tname, const char *r, size_t n, char *why, size_t why_len)
{
	if (n == 0 || n >= TPL_REASON_MAX)
		return err_set(why, why_len, "%s: reason: empty or longer than %d bytes", tname,
			       TPL_REASON_MAX - 1);
	for (size_t k = 0; k < n; k++)
		if (r[k] < 0x20 || r[k] > 0x7e)
			return err_set(why, why_len, "%s: reason: byte %zu is not printable ASCII",
				       tname, k);
	return 0;
}

ssize_t
tpl_msg_encode(const struct tpl_msg *m, unsigned char *out, size_t cap, char *why, size_t why_len)
{
	int t = type_index(m->type);
	const char *base = (const char *)&m->u;
	size_t len = TPL_HDR_LEN;

	if (t < 0)
		return err_set(why, why_len, "type %u: unknown", (unsigned)m->type);
	if (cap < TPL_MSG_MAX)
		return err_set(why, why_len, "%s: a buffer of %zu bytes is too small",
			       types[t].name, cap);
	out[0] = TPL_VERSION >> 8;
	out[1] = TPL_VERSION & 0xff;
	out[2] = (unsigned char)(m->type >> 8);
	out[3] = (unsigned char)m->type;
	for (const struct field *f = types[t].fields; f->name; f++) {
		uint32_t v;
		memcpy(&v, base + f->off, 4);
		if (check(types[t].name, f, v, why, why_len) == -1)
			return -1;
		put32(out + len, v);
		len += 4;
	}
	if (types[t].reason) {
		const char *r = m->u.refused.reason;
		size_t n = strnlen(r, TPL_REASON_MAX);
		if (check_reason(types[t].name, r, n, why, why_len) == -1)
			return -1;
		memcpy(out + len, r, n);
		len += n;
	}
	return (ssize_t)len;
}

int
tpl_msg_decode(const unsigned char *in, size_t len, struct tpl_msg *m, char *why, size_t why_len)
{
	memset(m, 0, sizeof(*m));
	if (len < TPL_HDR_LEN)
		return err_set(why, why_len, "a record of %zu bytes: shorter than a header", len);
	unsigned version = (unsigned)in[0] << 8 | in[1];
	unsigned type = (unsigned)in[2] << 8 | in[3];
	int t = type_index(type);
	if (version != TPL_VERSION)
		return err_set(why, why_len, "%s: protocol version %u, not %u",
			       tpl_type_name(type), version, TPL_VERSION);
	if (t < 0)
		return err_set(why, why_len, "type %u: unknown", type);
	if (len > TPL_MSG_MAX)
		return err_set(why, why_len, "%s: %zu bytes, more than %d", types[t].name, len,
			       TPL_MSG_MAX);
	m->type = (enum tpl_type)type;
	char *base = (char *)&m->u;
	size_t pos = TPL_HDR_LEN;
	for (const struct field *f = types[t].fields; f->name; f++, pos += 4) {
		if (len - pos < 4)
			return err_set(why, why_len, "%s: %zu bytes: truncated at %s",
				       types[t].name, len, f->name);
		uint32_t v = get32(in + pos);
		if (check(types[t].name, f, v, why, why_len) == -1)
			return -1;
		memcpy(base + f->off, &v, 4);
	}
	if (types[t].reason) {
		size_t n = len - pos;
		/* A NUL is no printable byte: check_reason refuses it too. */
		if (check_reason(types[t].name, (const char *)in + pos, n, why, why_len) == -1)
			return -1;
		memcpy(m->u.refused.reason, in + pos, n);
		pos = len;
	}
	if (pos != len)
		return err_set(why, why_len, "%s: %zu bytes, %zu expected", types[t].name, len,
			       pos);
	return 0;
}

int
tpl_msg_nfds(const struct tpl_msg *m)
{
	switch (m->type) {
	case TPL_ATTACH:
	case TPL_SPAWNED:
		return 1;
	case TPL_SPAWN:
		return TPL_SPAWN_FIXED_FDS + (int)m->u.spawn.n_cg_fds + (int)m->u.spawn.n_unix_fds;
	default:
		return 0;
	}
}

/* The kind descriptor i of m must be: 'f' a regular file, 's' a socket, 'd' a directory, 'p' a pidfd, '?' any. */
static char
fd_kind(const struct tpl_msg *m, int i)
{
	if (m->type == TPL_ATTACH)
		return 's';
	if (m->type == TPL_SPAWNED)
		return 'p';
	/* SPAWN: spec, connection file, runtime directory, stdin, out, cgroup files, sockets */
	if (i < 2)
		return 'f';
	if (i == 2)
		return 'd';
	if (i < TPL_SPAWN_FIXED_FDS)
		return '?'; /* /dev/null and a pipe */
	return i < TPL_SPAWN_FIXED_FDS + (int)m->u.spawn.n_cg_fds ? 'f' : 's';
}

/* A pidfd is an anonymous inode that /proc names "anon_inode:[pidfd]". */
static int
is_pidfd(int fd)
{
	char path[64], target[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[pidfd]") == 0;
}

static int
fd_is(int fd, char kind)
{
	struct stat st;

	if (kind == 'p')
		return is_pidfd(fd);
	if (fstat(fd, &st) == -1)
		return 0;
	switch (kind) {
	case 'f': return S_ISREG(st.st_mode);
	case 's': return S_ISSOCK(st.st_mode);
	case 'd': return S_ISDIR(st.st_mode);
	default: return 1;
	}
}

union tpl_ctl {
	struct cmsghdr align;
	char buf[CMSG_SPACE(TPL_FDS_MAX * sizeof(int))];
};

int
tpl_msg_send(int sock, const struct tpl_msg *m, const int *fds, int nfds)
{
	unsigned char data[TPL_MSG_MAX];
	union tpl_ctl ctl;
	ssize_t len = tpl_msg_encode(m, data, sizeof(data), NULL, 0);

	if (len == -1 || nfds != tpl_msg_nfds(m) || nfds > TPL_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct iovec iov = {data, (size_t)len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n == len)
			return 0;
		if (n == -1 && errno == EINTR)
			continue;
		if (n >= 0)
			errno = EMSGSIZE; /* a seqpacket record goes whole or not at all */
		return -1;
	}
}

/* Every descriptor of mh's control data into fds[TPL_FDS_MAX]; those beyond are closed. */
static int
take_fds(struct msghdr *mh, int *fds, int *over)
{
	int count = 0;

	*over = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (count < TPL_FDS_MAX) {
				fds[count++] = fd;
			} else {
				close(fd);
				*over = 1;
			}
		}
	}
	return count;
}

int
tpl_msg_recv(int sock, struct tpl_msg *m, int *fds, int *nfds, char *why, size_t why_len)
{
	unsigned char data[TPL_MSG_MAX + 1]; /* one byte more: an oversized record shows */
	union tpl_ctl ctl;
	struct iovec iov = {data, sizeof(data)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ssize_t n;
	int over, rc = -2;

	*nfds = 0;
	memset(m, 0, sizeof(*m));
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	int count = take_fds(&mh, fds, &over);
	if (over || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		err_set(why, why_len, "a record of more than %d bytes or %d descriptors",
			TPL_MSG_MAX, TPL_FDS_MAX);
	else if (tpl_msg_decode(data, (size_t)n, m, why, why_len) == -1)
		;
	else if (count != tpl_msg_nfds(m))
		err_set(why, why_len, "%s carries %d descriptors, not %d", tpl_type_name(m->type),
			count, tpl_msg_nfds(m));
	else
		rc = 1;
	for (int i = 0; rc == 1 && i < count; i++) {
		if (fd_is(fds[i], fd_kind(m, i)))
			continue;
		err_set(why, why_len, "%s: descriptor %d is not of its kind (%c)",
			tpl_type_name(m->type), i, fd_kind(m, i));
		rc = -2;
	}
	if (rc == 1) {
		*nfds = count;
		return 1;
	}
	for (int i = 0; i < count; i++)
		close(fds[i]);
	return -2;
}

int
tpl_peer_check(int sock, pid_t pid, uid_t uid, char *why, size_t why_len)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1)
		return err_set(why, why_len, "SO_PEERCRED of the template's line: %s",
			       strerror(errno));
	if ((pid != 0 && cr.pid != pid) || cr.uid != uid)
		return err_set(why, why_len, "the template's line is of pid %d uid %u, not of "
			       "pid %d uid %u", (int)cr.pid, (unsigned)cr.uid, (int)pid,
			       (unsigned)uid);
	return 0;
}

/* Appends s and its NUL to the memfd; 0 or -1. */
static int
put_string(int fd, const char *s)
{
	size_t len = strlen(s) + 1;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, s + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

int
tpl_spec_write(const struct tpl_spec *s, char *why, size_t why_len)
{
	int fd = memfd_create("template-spec", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd == -1)
		return err_set(why, why_len, "memfd_create for the template's spec: %s",
			       strerror(errno));
	int bad = put_string(fd, s->runtime_dir) == -1 || put_string(fd, s->cwd) == -1;
	for (size_t i = 0; !bad && s->envp && s->envp[i]; i++)
		bad = put_string(fd, s->envp[i]) == -1;
	/* Sealed: the template reads what the worker wrote, whatever else holds it. */
	if (bad || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
			 F_SEAL_SEAL) == -1) {
		err_set(why, why_len, "write the template's spec: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int
tpl_spec_parse(char *buf, size_t len, struct tpl_spec *s, char **envp_store, size_t env_cap,
	       char *why, size_t why_len)
{
	size_t pos = 0, n_env = 0;
	char *parts[2];

	memset(s, 0, sizeof(*s));
	if (len > TPL_SPEC_MAX)
		return err_set(why, why_len, "spec: %zu bytes, more than %d", len, TPL_SPEC_MAX);
	if (len == 0 || buf[len - 1] != '\0')
		return err_set(why, why_len, "spec: does not end with a NUL");
	for (int k = 0; k < 2; k++) {
		if (pos >= len)
			return err_set(why, why_len, "spec: no %s", k ? "cwd" : "runtime_dir");
		parts[k] = buf + pos;
		size_t n = strlen(parts[k]);
		if (parts[k][0] != '/' || n >= PATH_MAX)
			return err_set(why, why_len, "spec: %s is not an absolute path below %d "
				       "bytes", k ? "cwd" : "runtime_dir", PATH_MAX);
		pos += n + 1;
	}
	while (pos < len) {
		char *e = buf + pos;
		if (n_env + 1 >= env_cap || n_env >= TPL_ENV_MAX)
			return err_set(why, why_len, "spec: more than %zu environment entries",
				       env_cap - 1 < TPL_ENV_MAX ? env_cap - 1 : TPL_ENV_MAX);
		if (strchr(e, '=') == NULL || e[0] == '=')
			return err_set(why, why_len, "spec: environment entry %zu is not "
				       "NAME=value", n_env);
		envp_store[n_env++] = e;
		pos += strlen(e) + 1;
	}
	envp_store[n_env] = NULL;
	s->runtime_dir = parts[0];
	s->cwd = parts[1];
	s->envp = envp_store;
	return 0;
}
