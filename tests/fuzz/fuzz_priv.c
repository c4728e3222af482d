/*
 * fuzz_priv.c - the front -> parent decoder (priv_msg.h) on arbitrary
 * records from a front that may be compromised. A record it accepts must
 * encode again to the very same bytes: what the parent accepts it could
 * also have said, unchanged.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "priv_msg.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct priv_msg m;
	unsigned char again[PRIV_MSG_MAX];
	char err[PRIV_ERR_LEN];

	if (priv_msg_decode(data, size, &m, err, sizeof(err)) == -1)
		return 0;
	ssize_t n = priv_msg_encode(&m, again, sizeof(again), err, sizeof(err));
	if (n != (ssize_t)size || memcmp(again, data, size) != 0)
		abort();
	return 0;
}
