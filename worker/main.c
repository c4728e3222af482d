/* main.c - codeexec-worker entry point (placeholder until the worker lands). */
#include "config.h"

int
main(void)
{
	return 0;
}
