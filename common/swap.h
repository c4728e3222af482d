/* swap.h - exchange two lvalues of one type (reload: the new setting in, the old one out). */
#ifndef COMMON_SWAP_H
#define COMMON_SWAP_H

#define SWAP(a, b)                                                                         \
	do {                                                                               \
		__typeof__(a) swap_tmp_ = (a);                                             \
		(a) = (b);                                                                 \
		(b) = swap_tmp_;                                                           \
	} while (0)

#endif
