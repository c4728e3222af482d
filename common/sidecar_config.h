/*
 * sidecar_config.h - the `sidecars:` key (seed 000's SidecarConfig, issue
 * 14): long-lived helpers the privileged parent starts before the pool,
 * as the daemon's unprivileged user, and whose address every kernel gets.
 *
 * Read from the YAML tree by sidecars_read_node (config.c's table calls
 * it: a list of mappings with list, map and nested fields, which the
 * table's CFG_RECORDS cannot hold). The scalar fields are declared in a
 * field table of their own, with their reload scope, and read by the
 * scalar grammar of every key (config_set_scalar).
 */
#ifndef COMMON_SIDECAR_CONFIG_H
#define COMMON_SIDECAR_CONFIG_H

#include <stddef.h>

#include "strlist.h"

struct config_key;
struct ynode;

/* What the parent does when a sidecar exits (restart). */
enum sidecar_restart {
	SIDECAR_RESTART_ON_FAILURE, /* unless it exited 0 */
	SIDECAR_RESTART_ALWAYS,
	SIDECAR_RESTART_NEVER,
};

/* The most sidecars one daemon runs (priv_msg's index is one byte's worth). */
#define SIDECARS_MAX 16

struct config_sidecar {
	char *name;		/* letters, digits, _ and -: log lines, /health */
	struct strlist command;	/* argv; not empty */
	int use_env_python;	/* command follows build_dir/bin/python */
	char *url_env_var;	/* kernels get it as http://host:port */
	char *host;		/* numeric IPv4 or IPv6 loopback or any address */
	int port;		/* in use: the parent replaces a 0 with a free one */
	int port_configured;	/* as written; 0: pick one */
	char *health_path;	/* GET until 2xx; starts with / */
	double readiness_timeout_s;
	struct strmap env;	/* extra variables for the sidecar (kernel_environment's rules) */
	int socket;		/* also served on a Unix socket (relay.h) */
	char *socket_path;	/* that socket, set by the parent at start-up; else NULL */
	enum sidecar_restart restart;
	int limit_memory_mb;	/* 0: none */
	int limit_pids;
	double limit_cpu;
};

struct config_sidecars {
	struct config_sidecar *v;
	size_t n;
};

/*
 * Read `list` (a YAML sequence, or null) of file `file` into *s, which is
 * emptied first. `env_name_ok` checks a name of `env` as kernel_environment's
 * names are checked. 0, or -1 with "FILE:LINE:COLUMN: sidecars item N: ..."
 * in why.
 */
int sidecars_read_node(struct config_sidecars *s, const char *file, const struct ynode *list,
		       int (*env_name_ok)(const char *name, char *why, size_t why_len), char *why,
		       size_t why_len);
/* Release what *s owns; *s is then empty. */
void sidecars_free(struct config_sidecars *s);
/* Nonzero if sidecars a and b differ in any field of the table (the port
 * as written, not as picked). SIGHUP restarts those that differ. */
int sidecar_differs(const struct config_sidecar *a, const struct config_sidecar *b);
/*
 * The fields of a sidecar (offsets in struct config_sidecar), each
 * with its reload scope, terminated by a NULL name.
 */
const struct config_key *sidecar_config_fields(void);
/*
 * How many fields of `scope` (an enum reload_scope of config.h) whose
 * names start with `prefix` (NULL: any) differ between a and b. Scope
 * RELOAD_RESTART is what kernels and the front know the sidecar by,
 * which a reload cannot change.
 */
int sidecar_fields_changed(const struct config_sidecar *a, const struct config_sidecar *b, int scope,
			   const char *prefix);
/* The names of the fields of `scope`, as "a, b or c", into names[len] (cut to fit). */
void sidecar_field_names(int scope, char *names, size_t len);
/*
 * Move b's settings of scope RELOAD_SIDECARS into the running a; b gets
 * a's, to be freed. Fields of other scopes stay.
 */
void sidecar_take_settings(struct config_sidecar *a, struct config_sidecar *b);
/* restart's value as written. */
const char *sidecar_restart_name(enum sidecar_restart r);

#endif
