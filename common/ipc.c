/* ipc.c - see ipc.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"
#include "ipc.h"

static const char *const type_names[] = {
	[IPC_START] = "START",
	[IPC_EXECUTE] = "EXECUTE",
	[IPC_INTERRUPT] = "INTERRUPT",
	[IPC_RESTART_KERNEL] = "RESTART_KERNEL",
	[IPC_SHUTDOWN] = "SHUTDOWN",
	[IPC_STREAM] = "STREAM",
	[IPC_FILE_LIST] = "FILE_LIST",
	[IPC_FILE_OPEN] = "FILE_OPEN",
	[IPC_FILE_WRITE] = "FILE_WRITE",
	[IPC_INPUT_REPLY] = "INPUT_REPLY",
	[IPC_UPSTREAM_REPLY] = "UPSTREAM_REPLY",
	[IPC_READY] = "READY",
	[IPC_OUTPUT] = "OUTPUT",
	[IPC_RESULT] = "RESULT",
	[IPC_KERNEL_DIED] = "KERNEL_DIED",
	[IPC_LOG] = "LOG",
	[IPC_START_FAILED] = "START_FAILED",
	[IPC_STREAMING] = "STREAMING",
	[IPC_FILES] = "FILES",
	[IPC_FILE] = "FILE",
	[IPC_WAITING] = "WAITING",
	[IPC_RESUMED] = "RESUMED",
	[IPC_INPUT_REQUEST] = "INPUT_REQUEST",
	[IPC_UPSTREAM_CALL] = "UPSTREAM_CALL",
};

int
ipc_type_valid(unsigned type)
{
	return type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type] != NULL;
}

const char *
ipc_type_name(unsigned type)
{
	return ipc_type_valid(type) ? type_names[type] : "unknown";
}

void
ipc_hdr_encode(const struct ipc_hdr *h, unsigned char *out)
{
	uint16_t v16;
	uint32_t v32;

	v16 = htons(h->version);
	memcpy(out, &v16, 2);
	v16 = htons(h->type);
	memcpy(out + 2, &v16, 2);
	v32 = htonl(h->flags);
	memcpy(out + 4, &v32, 4);
	v32 = htonl(h->id);
	memcpy(out + 8, &v32, 4);
	v32 = htonl(h->len);
	memcpy(out + 12, &v32, 4);
}

int
ipc_hdr_decode(const unsigned char *in, struct ipc_hdr *h, char *why, size_t why_len)
{
	uint16_t v16;
	uint32_t v32;

	memcpy(&v16, in, 2);
	h->version = ntohs(v16);
	memcpy(&v16, in + 2, 2);
	h->type = ntohs(v16);
	memcpy(&v32, in + 4, 4);
	h->flags = ntohl(v32);
	memcpy(&v32, in + 8, 4);
	h->id = ntohl(v32);
	memcpy(&v32, in + 12, 4);
	h->len = ntohl(v32);

	if (h->version != IPC_VERSION) {
		err_set(why, why_len, "wrong protocol version");
		return -1;
	}
	if (!ipc_type_valid(h->type)) {
		err_set(why, why_len, "unknown message type");
		return -1;
	}
	if (h->len > IPC_MAX_PAYLOAD) {
		err_set(why, why_len, "oversized payload");
		return -1;
	}
	return 0;
}

int
ipc_frame(struct buf *out, unsigned type, uint32_t id, struct json_object *payload,
	  char *why, size_t why_len)
{
	const char *text = "";
	size_t len = 0;
	unsigned char hdr[IPC_HDR_LEN];

	if (payload) {
		text = json_object_to_json_string_length(payload, JSON_C_TO_STRING_PLAIN, &len);
		if (len > IPC_MAX_PAYLOAD) {
			err_set(why, why_len, "oversized payload");
			return -1;
		}
	}
	struct ipc_hdr h = {IPC_VERSION, (uint16_t)type, 0, id, (uint32_t)len};
	ipc_hdr_encode(&h, hdr);
	buf_add(out, hdr, sizeof(hdr));
	buf_add(out, text, len);
	return 0;
}

int
ipc_write(int fd, const void *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, (const char *)data + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

int
ipc_write_fd(int fd, const void *data, size_t len, int pass)
{
	union fdpass_one ctl;
	struct iovec iov = {(void *)data, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	fdpass_attach(&mh, &ctl, pass);
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	/* The descriptor went with the first byte; the rest is plain bytes. */
	return ipc_write(fd, (const char *)data + n, len - (size_t)n);
}

int
ipc_send(int fd, unsigned type, uint32_t id, struct json_object *payload)
{
	struct buf frame;
	buf_init(&frame);
	if (ipc_frame(&frame, type, id, payload, NULL, 0) == -1) {
		buf_free(&frame);
		errno = EMSGSIZE;
		return -1;
	}
	int rc = ipc_write(fd, frame.data, frame.len);
	int saved = errno;
	buf_free(&frame);
	errno = saved;
	return rc;
}

void
ipc_reader_init(struct ipc_reader *r, int fd)
{
	r->fd = fd;
	buf_init(&r->in);
	r->taken = 0;
	r->passed_fd = -1;
	r->fd_end = 0;
	r->fd_error = 0;
}

void
ipc_reader_free(struct ipc_reader *r)
{
	buf_free(&r->in);
	if (r->passed_fd != -1)
		close(r->passed_fd);
	r->passed_fd = -1;
}

/* Take the descriptors a recvmsg brought: one at most, and only when none waits. */
static void
take_fds(struct ipc_reader *r, struct msghdr *mh, ssize_t n)
{
	int fd, count = fdpass_take(mh, &fd);

	if (mh->msg_flags & MSG_CTRUNC)
		r->fd_error = 1; /* the kernel closed what did not fit */
	if (count == 0)
		return;
	if (r->passed_fd == -1 && !r->fd_error && n > 0) {
		r->passed_fd = fd;
		r->fd_end = r->taken + r->in.len + (uint64_t)n;
	} else {
		close(fd);
		r->fd_error = 1;
	}
	if (count > 1)
		r->fd_error = 1; /* fdpass_take closed the others */
}

ssize_t
ipc_reader_fill(struct ipc_reader *r)
{
	ssize_t n;
	union fdpass_one ctl;

	buf_reserve(&r->in, 65536);
	struct iovec iov = {r->in.data + r->in.len, r->in.cap - r->in.len - 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	do
		n = recvmsg(r->fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		take_fds(r, &mh, n);
	if (n > 0) {
		r->in.len += (size_t)n;
		r->in.data[r->in.len] = '\0';
	}
	if (r->fd_error) {
		errno = EPROTO;
		return -1;
	}
	return n;
}

ssize_t
ipc_decode(const unsigned char *data, size_t len, struct ipc_msg *msg, char *why, size_t why_len)
{
	struct json_tokener *tok;
	struct json_object *obj = NULL;

	msg->payload = NULL;
	msg->has_fd = 0;
	msg->fd = -1;
	if (len < IPC_HDR_LEN)
		return 0;
	if (ipc_hdr_decode(data, &msg->hdr, why, why_len) == -1)
		return -1;
	if (len - IPC_HDR_LEN < msg->hdr.len)
		return 0;
	if (msg->hdr.len > 0) {
		tok = json_tokener_new();
		obj = json_tokener_parse_ex(tok, (const char *)data + IPC_HDR_LEN,
					    (int)msg->hdr.len);
		int complete = json_tokener_get_error(tok) == json_tokener_success &&
			       (size_t)json_tokener_get_parse_end(tok) == msg->hdr.len;
		json_tokener_free(tok);
		if (!complete || !json_object_is_type(obj, json_type_object)) {
			json_object_put(obj);
			err_set(why, why_len, "payload is not a JSON object");
			return -1;
		}
	}
	msg->payload = obj;
	return (ssize_t)(IPC_HDR_LEN + msg->hdr.len);
}

int
ipc_reader_next(struct ipc_reader *r, struct ipc_msg *msg, char *why, size_t why_len)
{
	ssize_t used = ipc_decode((const unsigned char *)r->in.data, r->in.len, msg, why, why_len);
	if (used <= 0)
		return (int)used;
	/* The waiting descriptor is this frame's if its read ended inside it. */
	if (r->passed_fd != -1 && r->fd_end > r->taken && r->fd_end <= r->taken + (uint64_t)used) {
		msg->has_fd = 1;
		msg->fd = r->passed_fd;
		r->passed_fd = -1;
	}
	r->taken += (uint64_t)used;
	buf_consume(&r->in, (size_t)used);
	/* After a large frame (a big result) the buffer would stay that big. */
	buf_shrink(&r->in, IPC_READER_KEEP);
	return 1;
}

void
ipc_msg_clear(struct ipc_msg *msg)
{
	json_object_put(msg->payload);
	msg->payload = NULL;
	if (msg->has_fd && msg->fd != -1)
		close(msg->fd);
	msg->has_fd = 0;
	msg->fd = -1;
}
