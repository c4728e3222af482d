/*
 * handle.h - the handles this node mints (handle.c): the ids of MCP
 * sessions, execution sessions, jobs, batches and tasks. Each is 32
 * random lowercase hex digits (128 bits from getrandom), prefixed with
 * node_name and a dot when it is set, so that a load balancer can route
 * by the tag and a node can tell another node's handle from an unknown
 * one. What the privileged parent is told is the digits alone.
 */
#ifndef SUPERVISOR_HANDLE_H
#define SUPERVISOR_HANDLE_H

#include <stddef.h>

#include "config.h"

struct json_object;

#define HANDLE_RANDOM_LEN 32 /* hex digits */
/* The longest handle: the tag, its dot and the digits. */
#define HANDLE_LEN (CONFIG_NODE_NAME_MAX + 1 + HANDLE_RANDOM_LEN)

/* Take this node's tag (copied; "" for none). Before any handle is minted. */
void handle_init(const char *node_name);
/* This node's tag (borrowed, static), "" when none. */
const char *handle_node(void);
/* A new handle into out[HANDLE_LEN + 1]. */
void handle_mint(char *out);
/* The random digits of handle `h` (borrowed from it): what follows its last dot. */
const char *handle_random(const char *h);
/*
 * Whether `h` is a handle minted by another node: this node has a tag,
 * and `h` a well-formed one that is not it. Then 1 with the tag in
 * node[len]; else 0 (this node's, untagged, not a handle at all, or any
 * id on a node without node_name, which answers as before).
 */
int handle_elsewhere(const char *h, char *node, size_t len);
/*
 * Whether a tools/call's arguments (`args`, borrowed, may be NULL) name
 * another node's handle in one of the arguments that take one
 * (execution_session_id, session_id, job_id, batch_id): as
 * handle_elsewhere, with the argument's name in *arg (static).
 */
int handle_args_elsewhere(struct json_object *args, const char **arg, char *node, size_t len);

#endif
