/* main.c - codeexec-worker entry point (placeholder until the worker lands). */
#include "autoconf.h"

int
main(void)
{
	return 0;
}
