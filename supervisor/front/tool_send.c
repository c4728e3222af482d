/*
 * tool_send.c - {name}_send: publish one file of the session's outputs/
 * with a configured publisher. The worker opens the file and
 * passes its descriptor (sfiles.h); the publisher reads from that, so a
 * path swapped for a link during the send cannot redirect it.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "ipc_msg.h"
#include "json_member.h"
#include "log.h"
#include "pool.h"
#include "publish.h"
#include "result.h"
#include "session.h"
#include "sfiles.h"
#include "tools.h"

static int
send_listed(const struct config *cfg)
{
	return cfg->publishers.n > 0;
}

static void
send_describe(const struct config *cfg, struct json_object *tool)
{
	(void)cfg;
	json_object_object_add(
		tool, "description",
		json_object_new_string(
			"Publish a file the code wrote under outputs/ (the directory in "
			"$CODEEXECD_OUTPUT_DIR) with one of the configured publishers, and get "
			"a link to it. path is relative to outputs/; links, devices, FIFOs, "
			"absolute paths and .. are refused."));
	json_object_object_add(
		tool, "inputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"path\":{\"type\":\"string\",\"description\":\"File below outputs/, "
			    "as plots/fig.png\"},"
			    "\"publisher\":{\"type\":\"string\",\"description\":\"Publisher name; "
			    "default: the first configured\"},"
			    "\"name\":{\"type\":\"string\",\"description\":\"Name to publish it "
			    "under; default: path\"},"
			    "\"content_type\":{\"type\":\"string\",\"description\":\"MIME type; "
			    "default: guessed from its content and extension\"}},"
			    "\"required\":[\"path\"]}"));
	json_object_object_add(
		tool, "outputSchema",
		tool_schema("{\"type\":\"object\",\"properties\":{"
			    "\"publisher\":{\"type\":\"string\"},\"uri\":{\"type\":\"string\"},"
			    "\"name\":{\"type\":\"string\"},"
			    "\"size_bytes\":{\"type\":\"integer\"},\"sha256\":{\"type\":\"string\"},"
			    "\"mime_type\":{\"type\":\"string\"},"
			    "\"error\":{\"type\":\"object\",\"properties\":{"
			    "\"type\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}}}}}"));
}

/* The answer to a publisher name not configured: the names that are. */
static struct json_object *
unknown_publisher(const struct config *cfg, const char *name)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "no publisher \"");
	buf_adds(&b, name);
	buf_adds(&b, "\" is configured; the publishers are:");
	for (size_t i = 0; i < cfg->publishers.n; i++) {
		buf_adds(&b, i ? ", " : " ");
		buf_adds(&b, config_publisher_at(cfg, i)->name);
	}
	char *msg = buf_release(&b);
	struct json_object *r = tool_error("UnknownPublisher", msg);
	free(msg);
	return r;
}

/* A string argument that is absent or a string; -1 after tool_bad_params otherwise. */
static int
opt_string(struct tool_call *tc, const char *key, const char **out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(tc->args, key, &v) || v == NULL)
		return 0;
	if ((*out = tool_arg_string(tc, key)) == NULL || (*out)[0] == '\0') {
		char msg[80];
		snprintf(msg, sizeof(msg), "%s must be a non-empty string", key);
		tool_bad_params(tc, msg);
		return -1;
	}
	return 0;
}

/* The CallToolResult of a publish: a resource_link and the structured result. */
static struct json_object *
sent(struct json_object *o)
{
	struct json_object *r = tool_result(json_object_get(o), NULL, 0);

	json_object_array_add(json_object_object_get(r, "content"), result_resource_link(o));
	json_object_put(o);
	return r;
}

static struct json_object *
send_call(struct tool_call *tc)
{
	const char *path, *pub_name, *name, *ctype;
	char why[ERR_LEN];
	enum sfiles_err ferr;
	struct json_object *info;

	if ((path = tool_arg_string(tc, "path")) == NULL)
		return tool_bad_params(tc, "path must be a string");
	if (opt_string(tc, "publisher", &pub_name) == -1 || opt_string(tc, "name", &name) == -1 ||
	    opt_string(tc, "content_type", &ctype) == -1)
		return NULL;
	const struct config_publisher *p = publish_find(tc->cfg, pub_name);
	if (p == NULL)
		return unknown_publisher(tc->cfg, pub_name);
	if (name && !ipc_artifact_name_ok(name))
		return tool_error("Refused", "name must be a relative path without . or ..");
	int fd = sfiles_open(tc->session, path, &info, &ferr, why, sizeof(why));
	if (fd == -1)
		return tool_error(ferr == SFILES_REFUSED ? "Refused" : "WorkerFailed", why);
	struct publish_src src = {
		.fd = fd,
		.name = name ? name : json_member_str(info, "name"),
		.mime_type = ctype		  ? ctype
			     : p->content_type[0] ? p->content_type
						  : json_member_str(info, "mime_type"),
		.identity = tc->session->identity,
		.session = tc->session->id,
	};
	struct publish_out out;
	/* A copy or an upload takes long: nobody waits for the pool meanwhile. */
	pool_unlock();
	int rc = publish(p, &src, &out, why, sizeof(why));
	pool_lock();
	struct json_object *r;
	if (rc == -1) {
		log_warnx("session %.8s: send of %s with publisher %s failed: %s", tc->session->id,
			  path, p->name, why);
		r = tool_error(strstr(why, "max_bytes") ? "TooLarge" : "PublishFailed", why);
	} else {
		log_info("session %.8s: published %s with %s as %s", tc->session->id, path,
			 p->name, out.uri);
		r = sent(publish_json(p, &src, &out));
		free(out.uri);
	}
	close(fd);
	json_object_put(info);
	return r;
}

const struct tool tool_send = {
	.name_format = "{name}_send",
	.describe = send_describe,
	.listed = send_listed,
	.in_session = 1,
	.call = send_call,
};
