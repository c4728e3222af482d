/*
 * pool_exec.h - what the pool's other parts and pool_exec.c tell each
 * other, and nobody else: pool_io.c owns the workers' sockets and sends
 * with worker_send (pool_io.h), pool_exec.c owns the executions on them
 * (see pool.h for the public side of both).
 */
#ifndef SUPERVISOR_POOL_EXEC_H
#define SUPERVISOR_POOL_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "ipc_msg.h"
#include "pool.h"
#include "pool_io.h"

struct config;

/* pool_exec.c: remember the configuration (borrowed), for EXECUTE's limits. */
void pool_exec_init(const struct config *cfg);
/* Complete the call in flight on `w` with `result` (consumed). */
void pool_exec_complete(struct worker *w, struct json_object *result);
/*
 * OUTPUT and STREAMING for the call in flight on `w` (the message is
 * borrowed): add it to what the call streamed. -1 with `why` when the call
 * does not stream (OUTPUT) or did not ask to (STREAMING): the worker lied.
 */
int pool_exec_output(struct worker *w, const struct ipc_output *o, char *why, size_t why_len);
int pool_exec_streaming(struct worker *w, const struct ipc_streaming *s, char *why,
			size_t why_len);

#endif
