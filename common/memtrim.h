/*
 * memtrim.h - give memory back to the system after large payloads.
 *
 * glibc raises its mmap threshold each time a large mmap()ed block is
 * freed (up to 32 MB), so after one big result every later big buffer
 * comes from the heap or a thread's arena, and what is freed there stays
 * resident: a supervisor held hundreds of MB after a few large outputs.
 * Both processes fix the threshold at start and trim the heaps after a
 * large payload is freed.
 */
#ifndef COMMON_MEMTRIM_H
#define COMMON_MEMTRIM_H

#include <stddef.h>

/* A payload at least this big is followed by memtrim_after(). */
#define MEMTRIM_LARGE (1024u * 1024)

/*
 * Fix malloc's mmap threshold (no dynamic raise), so that blocks of
 * MEMTRIM_MMAP bytes or more are mmap()ed and unmapped when freed. Call
 * once, early, before threads start.
 */
#define MEMTRIM_MMAP (256u * 1024)
void memtrim_init(void);
/*
 * After freeing a payload of `bytes` bytes: if it was large, return the
 * free pages of every malloc arena to the system (malloc_trim). Cheap to
 * call for small payloads (does nothing).
 */
void memtrim_after(size_t bytes);

#endif
