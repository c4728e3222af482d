/*
 * sha256.h - the SHA-256 of bytes in memory, as lower-case hex: how a
 * result names the bytes of a file it points to (an upload, a rich output
 * saved by reference), so that a client can check what it reads back.
 */
#ifndef COMMON_SHA256_H
#define COMMON_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* Write the SHA-256 of data[len] as SHA256_HEX_LEN hex digits and a NUL
 * into out. 0, or -1 (out "") when OpenSSL fails. */
int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
