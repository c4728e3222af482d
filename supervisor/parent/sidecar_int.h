/*
 * sidecar_int.h - inside the sidecars of the parent (sidecar.h is their
 * public face); only sidecar*.c include it. One sidecar's state, and what
 * each part does for the others:
 *
 *   sidecar.c         the table of sidecars (S), start-up, the loop's
 *                     watch (exits, restarts, reports), shutdown
 *   sidecar_launch.c  fork and exec of a sidecar and of its relay
 *   sidecar_output.c  its output, logged and kept for failure messages
 *   sidecar_ready.c   its port, health probe and readiness
 *   sidecar_reload.c  SIGHUP: new settings for the sidecars that changed
 *
 * The table and each struct sidecar in it are sidecar.c's; the others
 * borrow them.
 */
#ifndef SUPERVISOR_SIDECAR_INT_H
#define SUPERVISOR_SIDECAR_INT_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "priv_msg.h"

struct config;
struct config_sidecar;
struct cgroup;

/* Bytes of a sidecar's last output kept for the message when it fails. */
#define TAIL_LEN 600

struct sidecar {
	struct config_sidecar *sc; /* borrowed from the configuration */
	const struct config *cfg;
	pid_t pid;		/* leads its own process group; 0: none runs */
	int out;		/* read end of its stdout and stderr; -1: none */
	enum priv_sidecar_run state;
	double started;		/* monotonic */
	time_t started_wall;
	double ready_deadline;	/* monotonic, while STARTING */
	double next_start;	/* monotonic, while BACKOFF */
	int backoff_s;
	unsigned restarts;
	char partial[512];	/* a line not ended yet */
	size_t partial_len;
	char tail[TAIL_LEN];	/* the last lines, for the failure message */
	int last_http;		/* the last probe's status, or -1 */
	struct cgroup *cg;	/* its own group, or NULL */
	int changed;		/* to be reported to the front */
	int reloaded;		/* SIGHUP changed it: its exit starts it again at once */
	int regroup;		/* its limits changed: a new control group at the restart */
	pid_t relay;		/* its Unix socket's relay (socket: true); 0: none runs */
	double relay_next;	/* monotonic: when a relay that exited starts again */
};

/* sidecar.c */
/* Sidecar number i < sidecars_count() (borrowed). */
struct sidecar *sidecar_at(size_t i);
/* Set the state of `s`, to be reported to the front. */
void sidecar_set_state(struct sidecar *s, enum priv_sidecar_run st);
/* Send `sig` to the process group of `s`, if it runs. */
void sidecar_kill_group(struct sidecar *s, int sig);

/* sidecar_launch.c */
/*
 * Run sidecars and relays as uid/gid ((uid_t)-1: our own); relays log to
 * stderr when `foreground`, and make their sockets of mode `relay_mode`.
 */
void sidecar_launch_init(uid_t uid, gid_t gid, int foreground, int relay_mode);
/* Before the first relay: find our executable, make runtime_dir/sidecars. 0, or -1 with why. */
int sidecar_relays_prepare(const struct config *cfg, char *why, size_t why_len);
/* Fork and exec sidecar `s`, STARTING. 0, or -1 with why. */
int sidecar_spawn(struct sidecar *s, char *why, size_t why_len);
/* Start the relay of `s`'s Unix socket (relay.h), as the sidecar's user. 0, or -1 with why. */
int sidecar_spawn_relay(struct sidecar *s, char *why, size_t why_len);

/* sidecar_output.c */
/* Log what the sidecar wrote, line by line; at EOF, close the pipe. */
void sidecar_drain(struct sidecar *s);

/* sidecar_ready.c */
/* A free port on `host`: bind port 0 and ask. 0 with *port, or -1 with why. */
int sidecar_pick_port(const char *host, int *port, char *why, size_t why_len);
/* Wait until `s` answers its health_path with a 2xx. 0, or -1 with why. */
int sidecar_await_ready(struct sidecar *s, char *why, size_t why_len);
/* Wait (5 s at most) until the relay of `s` listens. 0, or -1 with why. */
int sidecar_await_relay(struct sidecar *s, char *why, size_t why_len);
/* A restarted sidecar: ready once it answers, killed (and backed off) at its deadline. */
void sidecar_check_starting(struct sidecar *s);

#endif
