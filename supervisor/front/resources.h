/*
 * resources.h - MCP resources: a session's files under outputs/
 * (resources/list, resources/templates/list, resources/read), reached
 * through the session's worker (sfiles.h). A URI names the session:
 * codeexecd://session/SESSION_ID/outputs/PATH. Another identity's session,
 * an unknown one and a path outside outputs/ all fail as a missing file.
 */
#ifndef SUPERVISOR_RESOURCES_H
#define SUPERVISOR_RESOURCES_H

#include <stddef.h>

#include <json-c/json.h>

struct config;
struct session;

/* MCP's "Resource not found". */
#define RESOURCES_NOT_FOUND -32002
/* Files per resources/list page. */
#define RESOURCES_PAGE 100

/* Whether `method` is one of resources/... this module answers. */
int resources_method(const char *method);
/*
 * Answer `method` for caller `s` with `params` (borrowed). The result
 * (caller owns), or NULL with *code and msg[msg_len] for a JSON-RPC error.
 * pool_lock held (released while a file is read).
 */
struct json_object *resources_handle(const struct config *cfg, struct session *s,
				     const char *method, struct json_object *params, int *code,
				     char *msg, size_t msg_len);

#endif
