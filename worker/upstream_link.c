/* upstream_link.c - see upstream_link.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fdpass.h"
#include "log.h"
#include "upstream_link.h"
#include "worker.h"

/* Hand `text` (len bytes) to the kernel as a memfd; -1 logged when it cannot be. */
static int
deliver(struct kernel *k, const char *text, size_t len)
{
	int fd = memfd_create("codeexec-upstream-reply", MFD_CLOEXEC);
	union fdpass_one ctl;
	char byte = 'R';
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd == -1) {
		log_warn("memfd_create for an upstream reply");
		return -1;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warn("write an upstream reply of %zu bytes", len);
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	/* One open file: the kernel reads from where the writes ended. */
	if (lseek(fd, 0, SEEK_SET) == -1) {
		log_warn("lseek an upstream reply");
		close(fd);
		return -1;
	}
	fdpass_attach(&mh, &ctl, fd);
	ssize_t n = sendmsg(k->up_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n != 1)
		log_warn("pass an upstream reply to the kernel");
	close(fd);
	return n == 1 ? 0 : -1;
}

/* Answer request `seq` here: no execution runs to attribute it to. */
static void
refuse(struct kernel *k, int seq, const char *why)
{
	char text[512];
	struct json_object *msg = json_object_new_string(why);

	snprintf(text, sizeof(text),
		 "{\"seq\":%d,\"ok\":false,\"error\":{\"type\":\"bad_request\",\"message\":%s}}", seq,
		 json_object_to_json_string(msg));
	json_object_put(msg);
	deliver(k, text, strlen(text));
}

/* One whole request of `len` bytes at `p`. */
static void
request(struct wstate *w, const char *p, size_t len)
{
	struct json_object *o = json_tokener_parse(p), *v;
	int64_t seq = 0;

	if (o != NULL && json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "seq", &v) && json_object_is_type(v, json_type_int))
		seq = json_object_get_int64(v);
	if (seq < 1 || seq > INT32_MAX) {
		json_object_put(o);
		refuse(w->k, 0, "a request is a JSON object with an integer seq from 1");
		return;
	}
	json_object_put(o);
	if (w->ex == NULL || w->ex->msg_id[0] == '\0') {
		refuse(w->k, (int)seq, "code mode works only while a call runs the code");
		return;
	}
	struct ipc_upstream_call m = {.seq = (int)seq, .request = {(char *)p, len}};
	if (supervisor_send(w, IPC_UPSTREAM_CALL, w->ex->id, &m) == -1)
		refuse(w->k, (int)seq, "the request could not be forwarded to the daemon");
}

/* Take the whole requests at the front of k->up_in; -1: a broken frame. */
static int
take_requests(struct wstate *w)
{
	struct buf *b = &w->k->up_in;
	size_t off = 0;

	while (b->len - off >= 4) {
		const unsigned char *h = (const unsigned char *)b->data + off;
		size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
		if (n == 0 || n > UPSTREAM_LINK_MAX)
			return -1;
		if (b->len - off - 4 < n)
			break;
		char *p = b->data + off + 4;
		char saved = p[n];
		p[n] = '\0'; /* the byte after is ours: the buffer keeps a NUL at len */
		if (memchr(p, '\0', n) == NULL)
			request(w, p, n);
		else
			refuse(w->k, 0, "a request holds a NUL byte");
		p[n] = saved;
		off += 4 + n;
		if (w->k == NULL)
			return 0;
	}
	memmove(b->data, b->data + off, b->len - off);
	b->len -= off;
	return 0;
}

void
upstream_link_read(struct wstate *w)
{
	struct kernel *k = w->k;
	char chunk[65536];

	for (;;) {
		ssize_t n = read(k->up_fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (n == -1)
				log_warn("read the kernel's code mode line");
			kernel_upstream_close(k);
			return;
		}
		buf_add(&k->up_in, chunk, (size_t)n);
		if (take_requests(w) == -1) {
			log_warnx("the kernel broke the framing of its code mode line: closed");
			kernel_upstream_close(k);
			return;
		}
		if (w->k != k)
			return;
	}
}

void
upstream_link_reply(struct wstate *w, struct ipc_msg *m)
{
	struct ipc_upstream_reply r;
	char err[IPC_ERR_LEN];

	if (ipc_msg_view(m, IPC_UPSTREAM_REPLY, &r, err, sizeof(err)) == -1) {
		worker_protocol_error(w, err);
		return;
	}
	/* Late (the execution ended, the kernel is another): the code no longer waits. */
	if (w->ex && w->ex->id == m->hdr.id && w->k && w->k->up_fd != -1)
		deliver(w->k, r.reply.s, r.reply.len);
	ipc_msg_view_free(IPC_UPSTREAM_REPLY, &r);
}
