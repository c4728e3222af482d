/*
 * upstream_tooldef.h - code mode (issue 35): an upstream MCP server's tool
 * as an entry of the tool registry (toolreg.h), so that search_{name}_tools
 * ranks the functions of codeexec_upstreams beside the domain tools, by
 * the same BM25 over the same fields.
 *
 * The entry says what codemode_warm.c's package makes of the tool: the
 * function's name is the tool's name made a Python identifier (a-z, A-Z,
 * 0-9 and _; a _ before a digit, a _ after a keyword), its parameters the
 * keyword-only ones of inputSchema's properties (required first), its
 * docstring the tool's description. Its module is codeexec_upstreams.UP,
 * its category the upstream's name (so `category` keeps to one upstream
 * and the upstream's name is a word a query can meet), its return a dict
 * (structuredContent) when the tool has an outputSchema, else Any.
 */
#ifndef SUPERVISOR_UPSTREAM_TOOLDEF_H
#define SUPERVISOR_UPSTREAM_TOOLDEF_H

#include <json-c/json.h>

#include "tooldef.h"

/* The package every upstream module is in. */
#define UPSTREAM_PACKAGE "codeexec_upstreams"

/*
 * Fill d (zeroed first; free with tooldefs_free or upstream_tooldef_free)
 * with tool `tool`, an MCP Tool object of tools/list, of upstream `up`.
 * Returns 0, or -1 (d left empty) when the tool has no string name.
 */
int upstream_tooldef(const char *up, struct json_object *tool, struct tool_def *d);
void upstream_tooldef_free(struct tool_def *d);
/* The Python identifier codemode_warm.c makes of `name`. Caller owns. */
char *upstream_ident(const char *name);
/* Whether d was made by upstream_tooldef (its module is in the package). */
int upstream_tooldef_is(const struct tool_def *d);
/* The upstream d is a tool of (borrowed, within d->module). */
const char *upstream_tooldef_upstream(const struct tool_def *d);
/*
 * How an agent calls it, "UP.TOOL(*, query: str, limit: int = 3) -> dict".
 * Caller owns.
 */
char *upstream_tooldef_signature(const struct tool_def *d);

#endif
