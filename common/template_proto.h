/*
 * template_proto.h - the protocol of the kernel template (issue 33,
 * doc/DESIGN.md "Kernels from a template"): the parent <-> template line
 * and each worker <-> template line, their typed records, the one codec
 * that reads and writes them, and the check of who is at the other end.
 *
 * Transport: AF_UNIX SOCK_SEQPACKET pairs, all made by the privileged
 * parent: the template's fd 3 (to the parent), and one pair per worker,
 * whose template end the parent hands over with ATTACH. The template reads
 * requests from these lines only, never from a socket it accepted.
 *
 * A record is a 4-byte header (version, type: 16 bits each, network byte
 * order) and the fixed 32-bit fields of its type, in network byte order;
 * REFUSED ends with a reason of 1..TPL_REASON_MAX-1 printable ASCII bytes.
 * SPAWN's variable part (the kernel's runtime directory, working directory
 * and environment) travels as a sealed memfd, the spec (tpl_spec_*),
 * never in the record. What the decoder enforces: exact sizes, the
 * version, known types, nonzero seqs, pids above 1, enums in range, wait
 * statuses of dead children, descriptor counts and kinds per type (sockets,
 * regular files, pidfds); every descriptor of a refused record is closed.
 *
 * Adding a field: the struct, its type's table in template_proto.c, bump
 * TPL_VERSION, tests/unit/test_template_proto.c.
 */
#ifndef COMMON_TEMPLATE_PROTO_H
#define COMMON_TEMPLATE_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "err.h"

/* 1: ATTACH, SPAWN, RELEASE, READY, FORKED, SPAWNED, FAILED, EXITED, REFUSED. */
#define TPL_VERSION 1
#define TPL_HDR_LEN 4
#define TPL_MSG_MAX 256
#define TPL_REASON_MAX 200
#define TPL_ERR_LEN 160
/* START's unix_fds a kernel inherits, at most (SANDBOX_UNIX_FDS of worker/sandbox.h). */
#define TPL_UNIX_FDS 16
/* SPAWN's fixed descriptors: the spec, the connection file, the runtime directory, 0, 1+2. */
#define TPL_SPAWN_FIXED_FDS 5
#define TPL_FDS_MAX (TPL_SPAWN_FIXED_FDS + CGROUP_NCTL + TPL_UNIX_FDS)
/* The spec's bytes, at most: an environment of ipc_msg.h's size and two paths. */
#define TPL_SPEC_MAX (1024 * 1024)
#define TPL_ENV_MAX 4096

enum tpl_type {
	/* parent -> template: 1..15 */
	TPL_ATTACH = 1, /* struct tpl_attach, + the template's end of a worker's line */
	/* worker -> template: 16..31 */
	TPL_SPAWN = 16, /* struct tpl_spawn, + TPL_SPAWN_FIXED_FDS + n_cg_fds + n_unix_fds */
	TPL_RELEASE = 17, /* struct tpl_exited's pid alone: reap it now */
	/* template -> parent: 32..47 */
	TPL_READY = 32,	 /* struct tpl_ready */
	TPL_FORKED = 33, /* struct tpl_forked */
	/* template -> worker: 48..63 */
	TPL_SPAWNED = 48, /* struct tpl_spawned, + the kernel's pidfd */
	TPL_FAILED = 49,  /* struct tpl_failed */
	TPL_EXITED = 50,  /* struct tpl_exited */
	TPL_REFUSED = 51, /* struct tpl_refused */
};

/* ATTACH: serve the worker `worker` (the parent's id) on the line that comes with it. */
struct tpl_attach {
	uint32_t worker; /* nonzero */
};

/*
 * SPAWN: fork a kernel. Descriptors, in order: the spec (a regular file),
 * the connection file (regular), the runtime directory, the kernel's stdin
 * and its stdout+stderr, then n_cg_fds cgroup.procs files, then n_unix_fds
 * connected sockets (START's unix_fds). uid 0: the kernel keeps the
 * template's identity (no kernel_uid_range).
 */
struct tpl_spawn {
	uint32_t seq;	   /* nonzero, echoed by SPAWNED, FAILED or REFUSED */
	uint32_t mode;	   /* enum net_mode */
	uint32_t uid, gid; /* uid 0: none */
	uint32_t nofile;   /* RLIMIT_NOFILE; 0: inherit */
	uint32_t fsize_mb; /* RLIMIT_FSIZE in MiB; 0: inherit */
	uint32_t n_cg_fds;   /* <= CGROUP_NCTL */
	uint32_t n_unix_fds; /* <= TPL_UNIX_FDS */
};

/* READY: the template imported ipykernel and pool.preload and waits. */
struct tpl_ready {
	int32_t pid;	    /* its own, > 1 */
	uint32_t preloaded; /* modules of pool.preload imported */
};

/*
 * FORKED: the template forked kernel `pid` for worker `worker` (ATTACH's
 * id). The parent's CLAIM_KERNEL check (kernelpid.c) accepts a kernel the
 * template reported for that worker as it accepts the worker's own child.
 */
struct tpl_forked {
	uint32_t worker;
	int32_t pid;
};

/* SPAWNED: the kernel of `seq` runs its set-up; its pidfd comes with it. */
struct tpl_spawned {
	uint32_t seq;
	int32_t pid; /* > 1 */
};

/* FAILED: the child of `seq` failed at `stage` (kernel_child.h, sandbox.h) with errno `err`. */
struct tpl_failed {
	uint32_t seq;
	uint32_t stage; /* < 64 */
	uint32_t err;	/* < 4096 */
};

/*
 * EXITED: kernel `pid` died. The template leaves it a zombie (waitid with
 * WNOWAIT), so that its pid, and the process group it led, cannot be
 * reused while the worker still kills that group and its cgroup; it reaps
 * it on RELEASE of that pid, or when the worker's line closes.
 */
struct tpl_exited {
	int32_t pid;
	int32_t status; /* waitpid's, of a dead child */
};

/* REFUSED: SPAWN `seq` is not one the template starts (the worker execs it instead). */
struct tpl_refused {
	uint32_t seq;
	char reason[TPL_REASON_MAX];
};

struct tpl_msg {
	enum tpl_type type;
	union {
		struct tpl_attach attach;
		struct tpl_spawn spawn;
		struct tpl_ready ready;
		struct tpl_forked forked;
		struct tpl_spawned spawned;
		struct tpl_failed failed;
		struct tpl_exited exited; /* and RELEASE's pid */
		struct tpl_refused refused;
	} u;
};

const char *tpl_type_name(unsigned type);
/* Into out[cap >= TPL_MSG_MAX]: the record's length, or -1 with why (a field out of bounds). */
ssize_t tpl_msg_encode(const struct tpl_msg *m, unsigned char *out, size_t cap, char *why,
		       size_t why_len);
/* 0, or -1 with why; *m zeroed first. */
int tpl_msg_decode(const unsigned char *in, size_t len, struct tpl_msg *m, char *why,
		   size_t why_len);
/* How many descriptors a record of m must carry. */
int tpl_msg_nfds(const struct tpl_msg *m);

/* Send m with fds[nfds] (borrowed): 0, or -1 with errno (EINVAL: wrong count or field). */
int tpl_msg_send(int sock, const struct tpl_msg *m, const int *fds, int nfds);
/*
 * Receive one record: 1 with *m and fds[TPL_FDS_MAX] (the caller owns
 * *nfds of them), 0 at end of file, -1 with errno (recvmsg), -2 with why
 * for a record the codec refuses (its descriptors closed).
 */
int tpl_msg_recv(int sock, struct tpl_msg *m, int *fds, int *nfds, char *why, size_t why_len);

/*
 * The permission check of a line: 0 if the process at the other end of
 * sock is `pid` (0: any) running as `uid`, as SO_PEERCRED says; -1 with
 * why. Every line is a socketpair the parent made, so each side expects
 * the parent's credentials.
 */
int tpl_peer_check(int sock, pid_t pid, uid_t uid, char *why, size_t why_len);

/* SPAWN's spec: what the kernel needs that is no number. */
struct tpl_spec {
	char *runtime_dir; /* absolute */
	char *cwd;	   /* absolute */
	char **envp;	   /* NULL-terminated "NAME=value", at most TPL_ENV_MAX */
};

/* The spec as a sealed memfd: the descriptor (caller closes it), or -1 with why. */
int tpl_spec_write(const struct tpl_spec *s, char *why, size_t why_len);
/* Bytes of a spec (runtime_dir NUL cwd NUL env... NUL each): parse into *s, pointing into buf. */
int tpl_spec_parse(char *buf, size_t len, struct tpl_spec *s, char **envp_store, size_t env_cap,
		   char *why, size_t why_len);

#endif
