/* start_failure.c - see start_failure.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "start_failure.h"

#define PREFIX "no kernel could be started: "

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static char message[600]; /* PREFIX and the reason; "" when none */
static unsigned long count;

void
start_failure_set(const char *why)
{
	pthread_mutex_lock(&mutex);
	if (why == NULL) {
		message[0] = '\0';
	} else {
		snprintf(message, sizeof(message), PREFIX "%s", why);
		count++;
	}
	pthread_mutex_unlock(&mutex);
}

unsigned long
start_failure_count(void)
{
	return count;
}

const char *
start_failure_message(void)
{
	return message[0] ? message : NULL;
}

void
start_failure_add(struct json_object *health)
{
	pthread_mutex_lock(&mutex);
	if (message[0])
		json_object_object_add(health, "kernel_start_failure",
				       json_object_new_string(message + strlen(PREFIX)));
	pthread_mutex_unlock(&mutex);
}
