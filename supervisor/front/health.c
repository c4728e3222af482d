/* health.c - see health.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "health.h"
#include "log.h"

/* Guards `reason`. A leaf lock: held only to copy the string in or out. */
static pthread_mutex_t health_lock = PTHREAD_MUTEX_INITIALIZER;
static char reason[512]; /* "" when not degraded */
static atomic_int draining;

void
health_set_degraded(const char *why)
{
	pthread_mutex_lock(&health_lock);
	int was = reason[0] != '\0';
	if (why == NULL && was)
		log_info("no longer degraded (was: %s)", reason);
	else if (why && strcmp(why, reason) != 0)
		log_warnx("degraded: %s", why);
	snprintf(reason, sizeof(reason), "%s", why ? why : "");
	pthread_mutex_unlock(&health_lock);
}

int
health_degraded(char *why, size_t why_len)
{
	pthread_mutex_lock(&health_lock);
	int degraded = reason[0] != '\0';
	if (why && why_len)
		snprintf(why, why_len, "%s", reason);
	pthread_mutex_unlock(&health_lock);
	return degraded;
}

void
health_set_draining(int on)
{
	if (atomic_exchange(&draining, on != 0) != (on != 0))
		log_info(on ? "draining: no new sessions; the existing ones go on"
			    : "no longer draining: new sessions are taken again");
}

int
health_draining(void)
{
	return atomic_load(&draining);
}
