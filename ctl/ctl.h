/*
 * ctl.h - codeexecctl, the operator's client: shared state and helpers.
 *
 * One file per command (cmd_*.c), each exporting a struct ctl_cmd collected
 * in main.c's table. status, sessions, close, drain and undrain speak the
 * daemon's control socket (control.c); exec speaks MCP over HTTP
 * (mcp_client.c), as an agent would.
 */
#ifndef CTL_CTL_H
#define CTL_CTL_H

#include <stdio.h>

#include <json-c/json.h>

#include "config.h"

/* Exit statuses, as codeexecctl(8) documents them. */
enum {
	CTL_OK = 0,
	CTL_FAILED = 1, /* the daemon refused, or the code raised */
	CTL_USAGE = 2,	/* bad usage, bad config, no connection */
};

/* The command line and what is derived from it, loaded on demand. */
struct ctl {
	const char *conffile;
	const char *socket_path; /* -s, or NULL: from the config's runtime_dir */
	const char *url;	 /* -u, or NULL: from the config's listen */
	int json;		 /* -j: print the daemon's JSON as is */
	int cfg_loaded;
	struct config cfg;
	char *owned_socket_path; /* derived from the config; freed at exit */
	char *owned_url;
};

struct ctl_cmd {
	const char *name;
	const char *args; /* for the usage line: "", "SESSION", "CODE" */
	int nargs;	  /* exact number of operands */
	int (*run)(struct ctl *c, char **argv);
};

extern const struct ctl_cmd cmd_status;
extern const struct ctl_cmd cmd_sessions;
extern const struct ctl_cmd cmd_close;
extern const struct ctl_cmd cmd_drain;
extern const struct ctl_cmd cmd_undrain;
extern const struct ctl_cmd cmd_exec;

/* The parsed configuration, loading it on first use; NULL (logged) on error. */
const struct config *ctl_config(struct ctl *c);
/* The control socket's path (borrowed from `c`), or NULL (logged). */
const char *ctl_socket_path(struct ctl *c);
/* The MCP endpoint's URL (borrowed from `c`), or NULL (logged). */
const char *ctl_mcp_url(struct ctl *c);

/*
 * Send `request` (borrowed; our protocol version is added to it) on the
 * control socket and parse the answer into *reply (caller owns). With -j
 * the answer is printed as received. Returns CTL_OK; CTL_FAILED if the
 * daemon answered {"error":...} (reported, and *reply still set);
 * CTL_USAGE if there was no usable answer, or the daemon speaks another
 * protocol version (reported).
 */
int ctl_control(struct ctl *c, struct json_object *request, struct json_object **reply);

/*
 * Connect to the Unix socket `path`, send `line` and a newline, and read
 * one line back until the daemon closes. Returns the line (caller frees),
 * or NULL after logging why, naming the socket and the errno.
 */
char *control_exchange(const char *path, const char *line);

/* Member `key` of `o` as a string, integer or boolean, with a fallback. */
const char *ctl_str(struct json_object *o, const char *key, const char *fallback);
long long ctl_int(struct json_object *o, const char *key, long long fallback);
int ctl_bool(struct json_object *o, const char *key);
/* "3d 04h", "2h 03m", "4m 05s", "12s" into out. */
void ctl_duration(long long seconds, char *out, size_t outlen);

/* A text table whose columns are padded to their widest cell. */
struct table {
	size_t ncols;
	size_t ncells;
	char **cells; /* row-major; owned */
};

void table_init(struct table *t, size_t ncols);
/* Append one cell; rows fill left to right. */
void table_addf(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print with two spaces between columns and no padding after the last. */
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

#endif
