/* envp.c - see envp.h. */
#include "autoconf.h"

#include <string.h>

#include "envp.h"

const char *
envp_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}
