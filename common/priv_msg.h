/*
 * priv_msg.h - the front <-> privileged parent protocol (doc/README.privsep):
 * message types, their typed structs, and the one codec that reads and
 * writes them.
 *
 * The front (HTTP, MCP, sessions, the pool's logic) holds no privilege. It
 * asks the parent, which does, to start and end workers, to pin and kill a
 * worker's kernel, to remove a session's directory and to run
 * preprocess_command on an execution's code (which the front, forbidden
 * fork and exec, cannot). The parent checks
 * every request against its own configuration and state and answers
 * REFUSED to anything else. The front names objects only by the ids the
 * parent issued (worker ids, directory ids); it never gives the parent a
 * uid or a path, and a pid only to be checked against the parent's own
 * children (CLAIM_KERNEL).
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET socketpair, one message per
 * record, PRIV_MSG_MAX bytes at most. A record is a 4-byte header (version,
 * type: 16 bits each, network byte order) followed by the fixed fields of
 * its type, each in network byte order. No JSON, no variable layout: the
 * privileged side parses nothing more complex than this. WORKER_STARTED
 * carries a descriptor (SCM_RIGHTS): the front's end of the new worker's
 * socket; PREPROCESS, PREPROCESSED and SECRET carry one regular file each (a
 * memfd: the code, the command's output, a secret file's contents).
 *
 * What the decoder enforces: the record is exactly the size of its type
 * (REFUSED: its header and a reason of 1..PRIV_REASON_MAX-1 printable ASCII
 * bytes); the version is PRIV_VERSION; the type is known; ids are nonzero;
 * pids are above 1; enums are in range; a wait status is one that waitpid
 * reports for a dead child. priv_msg_recv also refuses descriptors on any
 * other type, a WORKER_STARTED, PREPROCESS or PREPROCESSED without exactly
 * one, a RUNTIME_RENEWED with more than one, descriptors that are not
 * sockets (regular files for PREPROCESS, PREPROCESSED and SECRET), and truncated records
 * or control data; every descriptor of a refused record is closed.
 *
 * Adding a field: add it to the struct, one line to its type's table in
 * priv_msg.c, bump PRIV_VERSION, cover it in tests/unit/test_priv_msg.c.
 *
 * Publishing needs no message here: the front's publishers (publish.h)
 * copy or upload a session's file from a descriptor its worker opened
 * (sfiles.h), with the front's own rights. A request the front may one
 * day need for it names a directory id the parent issued, never a path,
 * and takes the next type number of the front's range.
 */
#ifndef COMMON_PRIV_MSG_H
#define COMMON_PRIV_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "netmode.h"

/* 1: SPAWN_WORKER, END_WORKER, KILL_KERNEL, REMOVE_SESSION_DIR, CLAIM_KERNEL,
 * WORKER_STARTED, WORKER_EXITED, REFUSED. 2: WORKER_STARTED's name and uid,
 * RUNTIME_RENEWED, RUNTIME_DEGRADED. 3: PREPROCESS, PREPROCESSED. 4: SIDECAR_STATE.
 * 5: SECRET, SECRETS_SENT. 6: SPAWN_WORKER's dir. 7: DIR_LEFT. 8: FORK_DIR, DIR_FORKED.
 * 9: WORKER_LEFT. 10: EGRESS_BIND. Bump whenever a type or a layout changes. */
#define PRIV_VERSION 10
#define PRIV_HDR_LEN 4
#define PRIV_MSG_MAX 256
/* Bytes of REFUSED's reason, its NUL included. */
#define PRIV_REASON_MAX 200
/* Hex digits of a session directory's name (WORKER_STARTED). */
#define PRIV_NAME_LEN 16
/* Hex digits of an MCP session id (PREPROCESS). */
#define PRIV_SESSION_LEN 32
/* Room for a decoder's complaint. */
#define PRIV_ERR_LEN 160

enum priv_type {
	/* front -> parent: 1..31 */
	PRIV_SPAWN_WORKER = 1,	      /* struct priv_spawn_worker */
	PRIV_END_WORKER = 2,	      /* struct priv_end_worker */
	PRIV_KILL_KERNEL = 3,	      /* struct priv_kill_kernel */
	PRIV_REMOVE_SESSION_DIR = 4,  /* struct priv_remove_dir */
	PRIV_CLAIM_KERNEL = 5,	      /* struct priv_kill_kernel */
	PRIV_PREPROCESS = 6,	      /* struct priv_preprocess, + a memfd holding the code */
	PRIV_FORK_DIR = 7,	      /* struct priv_fork_dir */
	PRIV_EGRESS_BIND = 8,	      /* struct priv_egress_bind */

	/* parent -> front: 32..63 */
	PRIV_WORKER_STARTED = 32,     /* struct priv_worker_started, + the worker's socket */
	PRIV_WORKER_EXITED = 33,      /* struct priv_worker_exited */
	PRIV_REFUSED = 34,	      /* struct priv_refused */
	PRIV_RUNTIME_RENEWED = 35,    /* no fields, + the new control socket if there is one */
	PRIV_RUNTIME_DEGRADED = 36,   /* struct priv_refused's reason alone */
	PRIV_PREPROCESSED = 37,	      /* struct priv_preprocessed, + a memfd of the output */
	PRIV_SIDECAR_STATE = 38,      /* struct priv_sidecar_state */
	PRIV_SECRET = 39,	      /* struct priv_secret, + a memfd of the file's contents */
	PRIV_SECRETS_SENT = 40,	      /* no fields: every SECRET of this round is sent */
	PRIV_DIR_LEFT = 41,	      /* struct priv_dir_left */
	PRIV_DIR_FORKED = 42,	      /* struct priv_dir_forked */
	PRIV_WORKER_LEFT = 43,	      /* struct priv_worker_left, + a new socket to the worker */
};

/* Sidecars one daemon may run (SIDECARS_MAX of sidecar_config.h). */
#define PRIV_SIDECARS_MAX 16

/* Where a sidecar is in its life (SIDECAR_STATE's state). */
enum priv_sidecar_run {
	PRIV_SC_STARTING = 0, /* started, not answering health_path with a 2xx yet */
	PRIV_SC_RUNNING = 1,
	PRIV_SC_BACKOFF = 2,  /* exited; restarted when its back-off ends */
	PRIV_SC_FAILED = 3,   /* exited and not restarted (restart: never, or on-failure and 0) */
	PRIV_SC_STOPPED = 4,  /* stopped by the daemon, which is stopping */
};

/*
 * SIDECAR_STATE: sidecar `index` (of the configuration's list, which the
 * front shares: the parent started them before the front forked) changed,
 * or the periodic refresh of its memory. For /health and status only: the
 * front cannot signal it.
 */
struct priv_sidecar_state {
	uint32_t index;	   /* < PRIV_SIDECARS_MAX */
	uint32_t state;	   /* enum priv_sidecar_run */
	uint32_t pid;	   /* 0 when none runs */
	uint32_t restarts; /* since the daemon started */
	uint32_t started;  /* wall clock, seconds, of its last start; 0: none */
	uint32_t rss_kb;   /* its resident memory, 0 when none runs */
	uint32_t port;	   /* the port it serves, as picked at start-up */
};

/*
 * SPAWN_WORKER: start a worker for a future session. `seq` is the front's
 * own number for the request, echoed by WORKER_STARTED or REFUSED. The
 * sandbox settings the front wants are checked against the parent's
 * configuration (today: the network mode must be the configured one); the
 * uid, directories, cgroup and limits are the parent's alone, written by
 * the parent as the worker's START before the front gets the socket.
 * `dir` nonzero: the new worker works in that session directory, kept
 * after its worker was reaped (a session whose worker died or that
 * hibernated), with the kernel identity it had; WORKER_STARTED then names
 * the same dir.
 */
struct priv_spawn_worker {
	uint32_t seq;				/* nonzero */
	enum net_mode network_mode;
	uint32_t dir; /* 0, or an id of WORKER_STARTED whose worker was reaped */
};

/* END_WORKER: kill worker `worker` (and so its kernel) now. */
struct priv_end_worker {
	uint32_t worker; /* an id of WORKER_STARTED */
};

/*
 * CLAIM_KERNEL: worker `worker` named kernel_pid in READY. The parent pins
 * it (pidfd) only if it is a live child of that worker leading its own
 * process group (kernelpid.c), and kills its group when the worker exits or
 * is ended, so no kernel outlives its worker. REFUSED means the worker lied:
 * the front ends it. A later claim replaces the earlier (a restarted kernel).
 * KILL_KERNEL: kill the claimed kernel now; kernel_pid must be the one
 * claimed.
 */
struct priv_kill_kernel {
	uint32_t worker;
	int32_t kernel_pid; /* > 1 */
};

/* REMOVE_SESSION_DIR: remove directory `dir` of a worker that has exited. */
struct priv_remove_dir {
	uint32_t dir; /* an id of WORKER_STARTED */
};

/* WORKER_STARTED: the worker is spawned and has its START. */
struct priv_worker_started {
	uint32_t seq;	 /* SPAWN_WORKER's */
	uint32_t worker; /* the id to name it by, nonzero, never reused */
	uint32_t dir;	 /* the id of its session directory, nonzero, never reused */
	int32_t pid;	 /* for log lines and status only: the front cannot signal it */
	uint32_t uid;	 /* its kernel's identity, for log lines and status; 0: the daemon's */
	/* The directory's name, state_dir/sessions/NAME, for display and the
	 * kernel's own paths; the front never hands it back. */
	char name[PRIV_NAME_LEN + 1];
};

/* WORKER_EXITED: worker `worker` is reaped. Its kernel is dead too. */
struct priv_worker_exited {
	uint32_t worker;
	int32_t status; /* waitpid's status */
};

/*
 * RUNTIME_RENEWED: runtime_dir was gone and the parent made it again (and
 * its pid file); workers that failed before are no reason to back off. When
 * the daemon has a control socket, the new one comes with it: the front
 * serves it in place of the old. RUNTIME_DEGRADED: it cannot be made; the
 * reason is for /health.
 */
struct priv_degraded {
	char reason[PRIV_REASON_MAX]; /* printable ASCII, NUL-terminated, not empty */
};

/*
 * PREPROCESS: run preprocess_command on the code in the memfd that comes
 * with it (read from its start), as the front's uid, with the session's id
 * and identity in its environment. The parent answers PREPROCESSED with the
 * same seq once the command is reaped, or REFUSED. `seq` is the front's
 * number for the request (a space of its own, apart from SPAWN_WORKER's).
 */
struct priv_preprocess {
	uint32_t seq;				  /* nonzero */
	char session[PRIV_SESSION_LEN + 1];	  /* lowercase hex */
	char identity[PRIV_REASON_MAX];		  /* printable ASCII, not empty */
};

/* How a preprocess_command ended (PREPROCESSED's outcome). */
enum priv_pp_outcome {
	PRIV_PP_OK = 0,	     /* exited 0: the descriptor holds its stdout, the code to run */
	PRIV_PP_FAILED = 1,  /* exited non-zero or was killed: the descriptor holds its stderr */
	PRIV_PP_TIMEOUT = 2, /* killed at preprocess_timeout_s: its stderr */
	PRIV_PP_TOO_BIG = 3, /* wrote more than preprocess_max_bytes: its stderr */
};

/* PREPROCESSED: the command of PREPROCESS `seq` is reaped. */
struct priv_preprocessed {
	uint32_t seq;
	int32_t status;	  /* waitpid's status */
	uint32_t outcome; /* enum priv_pp_outcome */
};

/*
 * SECRET: the contents of secret file `path` (secret_file.h), which the
 * parent opened as root, in a sealed memfd; it replaces an earlier copy of
 * the same path. The parent sends one for each such file, then
 * SECRETS_SENT, to each front it starts before anything else, and again
 * on SIGHUP before it passes the signal on.
 */
struct priv_secret {
	char path[PRIV_REASON_MAX]; /* printable ASCII, NUL-terminated, not empty */
};

/*
 * DIR_LEFT: with persist_sessions, a session directory that an earlier
 * instance or front left, kept for the session the front's journal names
 * it for (session_journal.h). The parent found it itself in
 * state_dir/sessions (a directory, never a link, of the daemon's uid or of
 * one of kernel_uid_range, which stays reserved with it); it is a kept
 * directory like one of a reaped worker: SPAWN_WORKER may name `dir`, and
 * REMOVE_SESSION_DIR removes it. Sent before SECRETS_SENT, so that a new
 * front knows them all when it starts serving.
 */
struct priv_dir_left {
	uint32_t dir;		     /* nonzero, never reused, as WORKER_STARTED's */
	uint32_t uid;		     /* its kernel identity; 0: the daemon's */
	char name[PRIV_NAME_LEN + 1]; /* state_dir/sessions/NAME */
};

/*
 * WORKER_LEFT: with persist_sessions, a worker that the front before this
 * one had, still running with its kernel: the front died, and the parent
 * gave the worker a new socket (IPC_RESCUE_FD), whose other end comes
 * with this message. The worker answers nothing on it before RESUMED.
 * `worker` and `dir` keep the ids WORKER_STARTED gave them; `kernel` is
 * the kernel the parent holds claimed for it (0: none yet). Sent before
 * SECRETS_SENT, as DIR_LEFT is.
 */
struct priv_worker_left {
	uint32_t worker;	      /* as WORKER_STARTED's */
	uint32_t dir;		      /* as WORKER_STARTED's */
	int32_t pid;		      /* for log lines and status only */
	uint32_t uid;		      /* its kernel identity; 0: the daemon's */
	uint32_t kernel;	      /* the claimed kernel's pid, or 0 */
	char name[PRIV_NAME_LEN + 1]; /* state_dir/sessions/NAME */
};

/*
 * FORK_DIR: copy session directory `dir` (a live worker's or a kept one)
 * into a new session directory for a fork of that session, with a kernel
 * identity of its own (kernel_uid_range), reserved for it as a kept
 * directory's is. The parent copies with fs_copy.h's rules, at most its
 * own fork_max_bytes (the front names no size), and answers DIR_FORKED
 * with the same seq, or REFUSED (over the cap, forks off, no uid free).
 * `seq` shares PREPROCESS's space. DIR_FORKED: the new directory, kept
 * as a reaped worker's: SPAWN_WORKER may name `dir`, REMOVE_SESSION_DIR
 * removes it.
 */
struct priv_fork_dir {
	uint32_t seq; /* nonzero */
	uint32_t dir; /* an id of WORKER_STARTED or DIR_LEFT, not removed */
};

struct priv_dir_forked {
	uint32_t seq;		      /* FORK_DIR's */
	uint32_t dir;		      /* the copy's id, nonzero, never reused */
	uint32_t uid;		      /* its kernel identity; 0: the daemon's */
	char name[PRIV_NAME_LEN + 1]; /* state_dir/sessions/NAME */
	uint32_t bytes_hi, bytes_lo;  /* bytes of file contents copied */
	uint32_t files;		      /* regular files copied */
	uint32_t skipped;	      /* entries left out (fs_copy.h) */
};

/*
 * EGRESS_BIND: worker `worker` now runs MCP session `session` of
 * `identity`, for the egress proxy's audit lines (egress.h). The parent
 * checks the worker is live and passes it on; the front, which
 * authenticated the session, is the authority on both names. Not
 * answered; ignored without egress.allow.
 */
struct priv_egress_bind {
	uint32_t worker;		    /* an id of WORKER_STARTED */
	char session[PRIV_SESSION_LEN + 1]; /* lowercase hex */
	char identity[PRIV_REASON_MAX];	    /* printable ASCII, not empty */
};

/* REFUSED: a request was not carried out. */
struct priv_refused {
	uint16_t request;		 /* the type refused (maybe not a valid one) */
	uint32_t ref;			 /* its seq, worker or dir; 0 if none could be read */
	char reason[PRIV_REASON_MAX];	 /* printable ASCII, NUL-terminated, not empty */
};

struct priv_msg {
	enum priv_type type;
	union {
		struct priv_spawn_worker spawn;
		struct priv_end_worker end;
		struct priv_kill_kernel kill;
		struct priv_remove_dir remove;
		struct priv_worker_started started;
		struct priv_worker_exited exited;
		struct priv_refused refused;
		struct priv_degraded degraded;
		struct priv_preprocess pre;
		struct priv_preprocessed pred;
		struct priv_sidecar_state sidecar;
		struct priv_secret secret;
		struct priv_dir_left left;
		struct priv_worker_left wleft;
		struct priv_fork_dir fork;
		struct priv_dir_forked forked;
		struct priv_egress_bind bind;
	} u;
};

/* Printable name of a type, "unknown" if not one. */
const char *priv_type_name(unsigned type);

/*
 * Encode `m` (borrowed) into out[cap]. Returns the record's length, or -1
 * with why[why_len] set when a field is out of bounds (the encoder
 * applies the decoder's checks, so no peer is sent what it must refuse).
 */
ssize_t priv_msg_encode(const struct priv_msg *m, unsigned char *out, size_t cap, char *why,
			size_t why_len);

/*
 * Decode one record of `len` bytes into *m. 0, or -1 with why[why_len]
 * set. When the header could be read, m->type holds the type named (even
 * an unknown one) so a refusal can say what it refused.
 */
int priv_msg_decode(const unsigned char *in, size_t len, struct priv_msg *m, char *why,
		    size_t why_len);

/*
 * Send one message, with descriptor `fd` (borrowed) when `m` is
 * WORKER_STARTED, PREPROCESS, PREPROCESSED or SECRET, and optionally RUNTIME_RENEWED
 * (-1 otherwise). Blocks
 * until sent. 0, or -1 with errno set (EINVAL: a field out of bounds, or a
 * descriptor where none belongs).
 */
int priv_msg_send(int sock, const struct priv_msg *m, int fd);
/* priv_msg_send on a non-blocking `sock`, waiting up to `ms` for room when
 * it is full (then -1 with EAGAIN). */
int priv_msg_send_within(int sock, const struct priv_msg *m, int fd, int ms);

/*
 * Send `len` bytes as one record, with descriptor `fd` (borrowed) unless -1,
 * checking nothing: priv_msg_send's transport, and how tests and the test
 * hook (front_testhook.h) send what no encoder makes. 0, or -1 with errno.
 */
int priv_record_send(int sock, const unsigned char *rec, size_t len, int fd);

/*
 * Receive one message. Returns 1 with *m (and *fd, which the caller then
 * owns, for WORKER_STARTED, PREPROCESS, PREPROCESSED, SECRET and a RUNTIME_RENEWED
 * that carries one; else -1); 0 at EOF; -1 with errno on a read
 * error (an empty record, which no encoder makes, reads as EOF too); -2
 * with why[why_len] set when the record is malformed (every
 * descriptor it carried is closed; m->type as for priv_msg_decode, or 0).
 */
int priv_msg_recv(int sock, struct priv_msg *m, int *fd, char *why, size_t why_len);

#endif
