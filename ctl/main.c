/* main.c - codeexecctl (placeholder). */
#include "autoconf.h"

int
main(void)
{
	return 0;
}
