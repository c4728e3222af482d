/*
 * tasks.h - the MCP tasks extension (io.modelcontextprotocol/tasks) on the
 * 2026-07-28 path: a backgrounded execution is answered as a task, and
 * tasks/get, tasks/update and tasks/cancel reach it. A task is a job
 * (job.h) seen through another protocol face: its id is the job's id, its
 * status the job's, its result the one {name}_check_job gives.
 */
#ifndef SUPERVISOR_TASKS_H
#define SUPERVISOR_TASKS_H

#include <json-c/json.h>

struct config;
struct job;

#define TASKS_EXTENSION "io.modelcontextprotocol/tasks"

/* Nonzero for tasks/get, tasks/update and tasks/cancel. */
int tasks_method(const char *method);
/*
 * The CreateTaskResult of job `j`, which now runs in the background
 * (resultType "task"); marks it kept. pool_lock held. Caller owns.
 */
struct json_object *tasks_created(const struct config *cfg, struct job *j);
/*
 * Answer tasks/get, tasks/update or tasks/cancel of caller `identity` (a
 * task of another identity answers as an unknown one). pool_lock held.
 * Returns the result (caller owns), or NULL with *code and msg set.
 */
struct json_object *tasks_handle(const struct config *cfg, const char *method,
				 struct json_object *params, const char *identity, int *code,
				 char *msg, size_t msg_len);

#endif
