/*
 * rand.h - unguessable identifiers and keys from the OS random source.
 */
#ifndef COMMON_RAND_H
#define COMMON_RAND_H

#include <stddef.h>

/* Fill buf with n bytes from getrandom(2); fatal if the source fails. */
void rand_bytes(void *buf, size_t n);
/* Write 2*nbytes hex digits plus NUL into out (size >= 2*nbytes+1). */
void rand_hex(char *out, size_t nbytes);

#endif
