/*
 * result.h - execution results: the seed 003 shape, and how an MCP client
 * sees one (content items plus structuredContent).
 */
#ifndef SUPERVISOR_RESULT_H
#define SUPERVISOR_RESULT_H

#include <json-c/json.h>

/*
 * The MCP resource_link content item of a published artifact record
 * ({publisher, uri, name, mime_type, size_bytes, ...}): its values are
 * shared with `p`, which is not changed. Caller owns.
 */
struct json_object *result_resource_link(struct json_object *p);
/* A failed result with no output and error {type, message}. Caller owns. */
struct json_object *result_failed(const char *type, const char *message);
/*
 * The CallToolResult for `result` (a reference, consumed) of session
 * `session_id`: a text item, one image item per PNG/JPEG, structuredContent
 * and isError. It shares the result's members and never changes the
 * result, so a job's kept result can be answered as often as it is asked
 * for without a copy; the sharing is safe while every reference to them
 * is taken and dropped under pool_lock (json-c's counts are not atomic).
 * Caller owns.
 */
struct json_object *result_to_tool(struct json_object *result, const char *session_id);
/*
 * JSON Schema of structuredContent, for the tool's outputSchema; `or_job`
 * when the tool may answer with a background job instead. Caller owns.
 */
struct json_object *result_output_schema(int or_job);

struct buf;
/* "a (an open file), b (a socket)" of a [{name, reason}] list, into b. */
void result_name_reasons(struct buf *b, struct json_object *list);

#endif
