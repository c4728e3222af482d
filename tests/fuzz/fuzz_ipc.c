/* fuzz_ipc.c - the IPC frame decoder on arbitrary bytes from a worker. */
#include "autoconf.h"

#include "fuzz.h"
#include "ipc.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_msg m;
	const char *err;
	ssize_t used;

	/* Decode frame after frame, as the supervisor's reader does. */
	while (size > 0 && (used = ipc_decode(data, size, &m, &err)) > 0) {
		ipc_msg_clear(&m);
		data += used;
		size -= (size_t)used;
	}
	return 0;
}
