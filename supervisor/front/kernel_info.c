/* kernel_info.c - see kernel_info.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>

#include "kernel_info.h"
#include "xmalloc.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *text; /* "LANGUAGE VERSION" of the last READY */

void
kernel_info_set(const char *language, const char *version)
{
	char *t = language == NULL ? NULL
		  : version == NULL ? xstrdup(language)
				    : xasprintf("%s %s", language, version);

	pthread_mutex_lock(&lock);
	free(text);
	text = t;
	pthread_mutex_unlock(&lock);
}

char *
kernel_info_text(void)
{
	pthread_mutex_lock(&lock);
	char *t = text ? xstrdup(text) : NULL;
	pthread_mutex_unlock(&lock);
	return t;
}
