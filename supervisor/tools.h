/*
 * tools.h - the MCP tools: one file per tool, each exporting a table entry;
 * tools/list is generated from the table.
 */
#ifndef SUPERVISOR_TOOLS_H
#define SUPERVISOR_TOOLS_H

#include <json-c/json.h>

struct config;
struct session;

/* What a tool handler gets, and how it reports a protocol-level error. */
struct tool_call {
	const struct config *cfg;
	struct session *session;   /* borrowed; the caller holds a reference */
	struct json_object *args;  /* borrowed; an object (maybe empty) */
	int error_code;		   /* set with error_message to fail the request */
	char error_message[256];
};

struct tool {
	const char *name_format; /* "{name}" stands for the configured name */
	/* Add description, inputSchema and outputSchema to `tool`. */
	void (*describe)(const struct config *cfg, struct json_object *tool);
	/*
	 * Run the tool. Returns a CallToolResult (caller owns), or NULL after
	 * setting error_code and error_message for a JSON-RPC error (bad params).
	 * Called with pool_lock() held.
	 */
	struct json_object *(*call)(struct tool_call *tc);
};

extern const struct tool tool_execute;

/* The tools/list result's "tools" array. Caller owns. */
struct json_object *tools_list(const struct config *cfg);
/* The tool called `name`, or NULL. */
const struct tool *tools_find(const struct config *cfg, const char *name);

#endif
