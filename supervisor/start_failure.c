/* start_failure.c - see start_failure.h. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

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
start_failure_append(char *buf, size_t size)
{
	char *end = strrchr(buf, '}');
	char reason[sizeof(message)];

	pthread_mutex_lock(&mutex);
	snprintf(reason, sizeof(reason), "%s", message[0] ? message + strlen(PREFIX) : "");
	pthread_mutex_unlock(&mutex);
	if (end == NULL || reason[0] == '\0')
		return;
	size_t room = size - (size_t)(end - buf), len = strlen(reason);
	int fits = 0;
	/* Cut the reason (on a character boundary), never the JSON. */
	for (;;) {
		while (len > 0 && ((unsigned char)reason[len] & 0xc0) == 0x80)
			len--;
		struct json_object *s = json_object_new_string_len(reason, (int)len);
		int n = snprintf(end, room, ",\"kernel_start_failure\":%s}",
				 json_object_to_json_string_ext(s, JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(s);
		if ((fits = n >= 0 && (size_t)n < room) || len == 0)
			break;
		len = len * 3 / 4;
	}
	if (!fits) /* not even an empty reason fits: leave the object as it was */
		snprintf(end, room, "}");
}
