/*
 * cmd_exec.c - codeexecctl exec CODE: one run through the MCP endpoint.
 *
 * Goes the way an agent goes (initialize, tools/call, DELETE), so it tests
 * the whole path: HTTP, sessions, pool, worker and kernel. The session
 * lives for this one call only.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ctl.h"
#include "log.h"
#include "mcp_client.h"
#include "xmalloc.h"

/* CODE, or standard input when CODE is "-". Caller frees; NULL (logged) on error. */
static char *
exec_code(const char *arg)
{
	struct buf b;
	char chunk[8192];
	size_t n;

	if (strcmp(arg, "-") != 0)
		return xstrdup(arg);
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(stdin)) {
		log_warn("read code from standard input");
		buf_free(&b);
		return NULL;
	}
	buf_add(&b, "", 0);
	return buf_release(&b);
}

/* The name of the server's execute_NAME_code tool, from tools/list. Caller frees. */
static char *
exec_tool_name(struct mcpc *m)
{
	struct json_object *result = mcpc_call(m, "tools/list", NULL);
	struct json_object *tools;
	char *found = NULL;

	if (result == NULL)
		return NULL;
	if (json_object_object_get_ex(result, "tools", &tools) &&
	    json_object_is_type(tools, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(tools) && !found; i++) {
			const char *name = ctl_str(json_object_array_get_idx(tools, i), "name", "");
			size_t len = strlen(name);
			if (strncmp(name, "execute_", 8) == 0 && len > 13 &&
			    strcmp(name + len - 5, "_code") == 0)
				found = xstrdup(name);
		}
	}
	json_object_put(result);
	if (found == NULL)
		log_warnx("%s offers no execute_NAME_code tool", m->url);
	return found;
}

/* Print `s` to `f`, ending it with a newline if it has none. */
static void
exec_put(FILE *f, const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return;
	fputs(s, f);
	if (s[n - 1] != '\n')
		fputc('\n', f);
}

/* Output as a terminal shows it: stdout, values, stderr, then the error. */
static void
exec_print(struct json_object *sc)
{
	struct json_object *rich, *err;

	fputs(ctl_str(sc, "stdout", ""), stdout);
	if (json_object_object_get_ex(sc, "rich_outputs", &rich) &&
	    json_object_is_type(rich, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(rich); i++) {
			struct json_object *o = json_object_array_get_idx(rich, i);
			const char *mime = ctl_str(o, "mime_type", "?");
			if (strcmp(mime, "text/plain") == 0)
				exec_put(stdout, ctl_str(o, "data", ""));
			else
				fprintf(stderr, "[%s output not shown; use -j]\n", mime);
		}
	}
	fflush(stdout);
	fputs(ctl_str(sc, "stderr", ""), stderr);
	if (json_object_object_get_ex(sc, "error", &err) &&
	    json_object_is_type(err, json_type_object)) {
		const char *tb = ctl_str(err, "traceback", "");
		if (tb[0])
			exec_put(stderr, tb);
		else
			fprintf(stderr, "%s: %s\n", ctl_str(err, "type", "Error"),
				ctl_str(err, "message", ""));
	}
}

/* Show a tools/call result; returns the exit status it stands for. */
static int
exec_show(struct ctl *c, struct json_object *result)
{
	struct json_object *sc, *content;

	if (c->json) {
		printf("%s\n", json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN));
	} else if (json_object_object_get_ex(result, "structuredContent", &sc) &&
		   json_object_is_type(sc, json_type_object)) {
		exec_print(sc);
	} else if (json_object_object_get_ex(result, "content", &content) &&
		   json_object_array_length(content) > 0) {
		/* No structured result: show the text the server meant for people. */
		exec_put(stdout, ctl_str(json_object_array_get_idx(content, 0), "text", ""));
	}
	if (json_object_object_get_ex(result, "structuredContent", &sc))
		return ctl_bool(sc, "success") ? CTL_OK : CTL_FAILED;
	return ctl_bool(result, "isError") ? CTL_FAILED : CTL_OK;
}

/* tools/call of `tool` with {code}; the result (caller owns) or NULL (logged). */
static struct json_object *
exec_call(struct mcpc *m, const char *tool, const char *code)
{
	struct json_object *params = json_object_new_object();
	struct json_object *args = json_object_new_object();

	json_object_object_add(args, "code", json_object_new_string(code));
	json_object_object_add(params, "name", json_object_new_string(tool));
	json_object_object_add(params, "arguments", args);
	return mcpc_call(m, "tools/call", params);
}

static int
exec_run(struct ctl *c, char **argv)
{
	const char *url = ctl_mcp_url(c);
	struct json_object *result = NULL;
	struct mcpc m;
	char *code, *tool = NULL;
	int rc = CTL_USAGE;

	if (url == NULL || (code = exec_code(argv[0])) == NULL)
		return CTL_USAGE;
	/* auth.mode tokens or oauth: the token from the environment, never argv. */
	struct mcpc_opts opts = {.token = getenv("CODEEXECD_TOKEN"), .revision = MCPC_LEGACY};

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_warnx("libcurl could not be initialized");
		free(code);
		return CTL_USAGE;
	}
	if (mcpc_open(&m, url, &opts) == 0 && (tool = exec_tool_name(&m)) != NULL &&
	    (result = exec_call(&m, tool, code)) != NULL)
		rc = exec_show(c, result);
	json_object_put(result);
	mcpc_close(&m);
	curl_global_cleanup();
	free(tool);
	free(code);
	return rc;
}

const struct ctl_cmd cmd_exec = {
	.name = "exec",
	.args = "CODE",
	.nargs = 1,
	.run = exec_run,
};
