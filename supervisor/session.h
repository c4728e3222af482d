/*
 * session.h - MCP sessions: ids, the table, and one execution at a time.
 *
 * A session is created by `initialize` and gets its kernel worker from the
 * pool at its first execution. All functions run with pool_lock() held;
 * a session found with session_get() stays valid until session_put().
 */
#ifndef SUPERVISOR_SESSION_H
#define SUPERVISOR_SESSION_H

#include <pthread.h>
#include <time.h>

#include <json-c/json.h>

struct worker;

#define SESSION_ID_LEN 32 /* hex digits: 128 bits from getrandom */

struct session {
	struct session *next;
	char id[SESSION_ID_LEN + 1];
	char protocol_version[16];
	time_t created;
	time_t last_used;
	struct worker *worker; /* NULL until the first execution */
	int busy;	       /* an execution runs now */
	int closed;	       /* removed from the table */
	int refs;
	int log_level;	       /* syslog priority set by logging/setLevel */
	pthread_cond_t turn;   /* signalled when `busy` clears */
};

/* New session, or NULL with *why when pool.max_sessions is reached. */
struct session *session_create(const char *protocol_version, int max_sessions, const char **why);
/* Find a live session and take a reference, or NULL. */
struct session *session_get(const char *id);
/* Drop a reference taken by session_create or session_get. */
void session_put(struct session *s);
/* End a session: its kernel is shut down once no execution runs. */
void session_close(struct session *s);
/* Close every session idle longer than `idle_s` seconds (0: never). */
void session_expire(double idle_s);
/* Nonzero while an execution runs in any session. */
int session_any_busy(void);
/* Close every session (shutdown). */
void session_close_all(void);
int session_count(void);
/* [{id, created, last_used, busy, worker_pid}] of every session. Caller owns. */
struct json_object *session_describe(void);

/*
 * Run `code` in the session's kernel, waiting for an earlier execution of
 * the same session to finish first. Returns the result (caller owns).
 */
struct json_object *session_execute(struct session *s, const char *code, double timeout_s);

#endif
