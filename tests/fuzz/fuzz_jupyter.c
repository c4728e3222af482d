/*
 * fuzz_jupyter.c - the Jupyter message parser on arbitrary frames.
 *
 * Input: one flags byte, then frames as (2-byte big-endian length, bytes).
 * With flag bit 0 the harness signs the four JSON frames with the test key,
 * so the fuzzer reaches the JSON handling behind the signature check.
 */
#include "autoconf.h"

#include <string.h>

#include "fuzz.h"
#include "jupyter.h"

#define MAX_FRAMES 12

static const char key[] = "0123456789abcdef0123456789abcdef";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jupyter_signer *signer;
	struct jupyter_frame f[MAX_FRAMES + 2];
	struct jupyter_msg msg;
	char sig[65];
	char err[ERR_LEN] = "";
	size_t n = 0;

	if (signer == NULL && (signer = jupyter_signer_new(key, sizeof(key) - 1)) == NULL)
		return 0;
	if (size < 1)
		return 0;
	int sign = data[0] & 1;
	data++, size--;
	f[n++] = (struct jupyter_frame){"<IDS|MSG>", 9};
	f[n++] = (struct jupyter_frame){"", 0}; /* the signature, filled below */
	while (size >= 2 && n < MAX_FRAMES + 2) {
		size_t len = (size_t)data[0] << 8 | data[1];
		data += 2, size -= 2;
		if (len > size)
			len = size;
		f[n++] = (struct jupyter_frame){data, len};
		data += len, size -= len;
	}
	if (sign && n >= 6 && jupyter_sign(signer, &f[2], sig) == 0)
		f[1] = (struct jupyter_frame){sig, strlen(sig)};
	if (jupyter_parse(signer, f, n, &msg, err, sizeof(err)) == JUPYTER_OK)
		jupyter_msg_clear(&msg);
	return 0;
}
