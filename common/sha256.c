/* sha256.c - see sha256.h. */
#include "autoconf.h"

#include <openssl/evp.h>

#include "hex.h"
#include "sha256.h"

int
sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned md_len = 0;

	out[0] = '\0';
	if (EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) != 1 ||
	    md_len * 2 != SHA256_HEX_LEN)
		return -1;
	hex_encode(out, md, md_len);
	return 0;
}
