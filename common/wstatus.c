/* wstatus.c - see wstatus.h. */
#include "autoconf.h"

#include <string.h>
#include <sys/wait.h>

#include "wstatus.h"
#include "xmalloc.h"

char *
wstatus_text(int status)
{
	if (WIFEXITED(status))
		return xasprintf("exited with status %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(status));
		return xasprintf("killed by signal %d (SIG%s)", WTERMSIG(status),
				 abbrev ? abbrev : "?");
	}
	return xasprintf("stopped with wait status %d", status);
}
