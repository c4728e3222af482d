/* main.c - codeexecd entry point (placeholder). */
#include "autoconf.h"

int
main(void)
{
	return 0;
}
