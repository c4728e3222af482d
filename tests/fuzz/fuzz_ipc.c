/*
 * fuzz_ipc.c - the IPC decoders on arbitrary bytes from a worker: the frame
 * reader, then the typed codec of ipc_msg.h on every frame it accepts. A
 * message the codec accepts must encode again, and decode to the same
 * bytes: what the supervisor accepts it can also say, unchanged.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ipc_msg.h"

/* The typed decode of one accepted frame, and the round trip of what it accepts. */
static void
typed(const struct ipc_msg *f)
{
	unsigned type = f->hdr.type;
	size_t size = ipc_msg_size(type);
	char err[IPC_ERR_LEN];
	char e[ERR_LEN] = "";

	if (size == 0) {
		ipc_empty_decode(f, type, err, sizeof(err));
		return;
	}
	void *a = calloc(1, size), *b = calloc(1, size);
	if (a == NULL || b == NULL)
		abort();
	if (ipc_msg_decode(f, type, a, err, sizeof(err)) == 0) {
		struct buf one, two;
		struct ipc_msg g;
		buf_init(&one);
		buf_init(&two);
		if (ipc_msg_encode(&one, type, f->hdr.id, a, e, sizeof(e)) == 0) {
			if (ipc_decode((unsigned char *)one.data, one.len, &g, e,
				       sizeof(e)) != (ssize_t)one.len ||
			    ipc_msg_decode(&g, type, b, err, sizeof(err)) != 0 ||
			    ipc_msg_encode(&two, type, f->hdr.id, b, e, sizeof(e)) != 0 ||
			    one.len != two.len || memcmp(one.data, two.data, one.len) != 0)
				abort();
			ipc_msg_clear(&g);
		}
		buf_free(&one);
		buf_free(&two);
	}
	ipc_msg_free(type, a);
	ipc_msg_free(type, b);
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_msg m;
	char err[ERR_LEN] = "";
	ssize_t used;

	/* Decode frame after frame, as the supervisor's reader does. */
	while (size > 0 && (used = ipc_decode(data, size, &m, err, sizeof(err))) > 0) {
		typed(&m);
		ipc_msg_clear(&m);
		data += used;
		size -= (size_t)used;
	}
	return 0;
}
