/* memtrim.c - see memtrim.h. */
#include "autoconf.h"

#include <stddef.h>
#include <stdlib.h> /* defines __GLIBC__ */
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "memtrim.h"

void
memtrim_init(void)
{
#ifdef M_MMAP_THRESHOLD
	/* Setting it also turns off glibc's dynamic threshold. */
	(void)mallopt(M_MMAP_THRESHOLD, (int)MEMTRIM_MMAP);
#endif
#ifdef M_TRIM_THRESHOLD
	(void)mallopt(M_TRIM_THRESHOLD, (int)MEMTRIM_MMAP);
#endif
}

void
memtrim_after(size_t bytes)
{
	if (bytes < MEMTRIM_LARGE)
		return;
#ifdef __GLIBC__
	/* Also releases free pages inside the heaps, in every arena. */
	(void)malloc_trim(0);
#endif
}
