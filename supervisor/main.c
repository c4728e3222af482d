/* main.c - codeexecd entry point (placeholder). */
#include "config.h"

int
main(void)
{
	return 0;
}
