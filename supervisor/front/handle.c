/* handle.c - the handles this node mints, and other nodes' handles; see handle.h. */
#include "autoconf.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "handle.h"
#include "rand.h"

/* What a tag may hold: what check_node_name allows of node_name. */
#define TAG_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

static char node[CONFIG_NODE_NAME_MAX + 1];

void
handle_init(const char *node_name)
{
	snprintf(node, sizeof(node), "%s", node_name ? node_name : "");
}

const char *
handle_node(void)
{
	return node;
}

void
handle_mint(char *out)
{
	size_t n = 0;

	if (node[0]) {
		n = strlen(node);
		memcpy(out, node, n);
		out[n++] = '.';
	}
	rand_hex(out + n, HANDLE_RANDOM_LEN / 2);
}

const char *
handle_random(const char *h)
{
	const char *dot = strrchr(h, '.');

	return dot ? dot + 1 : h;
}

int
handle_elsewhere(const char *h, char *tag, size_t len)
{
	const char *dot = strchr(h, '.');

	/* A single node has no other to name: what it did not mint is unknown. */
	if (node[0] == '\0' || dot == NULL || dot == h ||
	    (size_t)(dot - h) > CONFIG_NODE_NAME_MAX || strspn(h, TAG_CHARS) != (size_t)(dot - h))
		return 0;
	if (strlen(node) == (size_t)(dot - h) && strncmp(h, node, (size_t)(dot - h)) == 0)
		return 0;
	snprintf(tag, len, "%.*s", (int)(dot - h), h);
	return 1;
}

int
handle_args_elsewhere(struct json_object *args, const char **arg, char *tag, size_t len)
{
	static const char *const keys[] = {"execution_session_id", "session_id", "job_id",
					   "batch_id"};
	struct json_object *v;

	for (size_t i = 0; args && i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (json_object_object_get_ex(args, keys[i], &v) &&
		    json_object_is_type(v, json_type_string) &&
		    handle_elsewhere(json_object_get_string(v), tag, len)) {
			*arg = keys[i];
			return 1;
		}
	}
	return 0;
}
