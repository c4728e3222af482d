/* worker_launch.c - see worker_launch.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "egress.h"
#include "err.h"
#include "fsutil.h"
#include "ipc_msg.h"
#include "kernel_env.h"
#include "kernel_env_rules.h"
#include "kernel_warm.h"
#include "log.h"
#include "relay.h"
#include "rand.h"
#include "worker_launch.h"
#include "xmalloc.h"

/* Seconds a worker gets to start its kernel before it gives up. */
#define STARTUP_TIMEOUT_S 60

/*
 * The session's package directory, there from the start: a sys.path entry
 * that did not exist at the first import stays skipped (importlib caches
 * the miss), so what %pip install put there later would not import.
 * Best effort: an install makes it too.
 */
static void
make_pkgs_dir(const char *workdir, uid_t uid)
{
	char *pkgs = kernel_env_pkgs_dir(workdir);
	if (mkdir(pkgs, 0700) == -1 || (uid != 0 && chown(pkgs, uid, uid) == -1))
		log_warn("mkdir %s for kernel identity %d", pkgs, (int)uid);
	free(pkgs);
}

/* Make a fresh, private working directory named `name`, owned by the
 * kernel's identity when it has one. Caller owns the path; NULL on failure. */
static char *
make_workdir(const struct config *cfg, const char *name, uid_t uid, char *why, size_t why_len)
{
	char *dir = xasprintf("%s/sessions/%s", cfg->state_dir, name);
	if (mkdir(dir, 0700) == -1) {
		err_set(why, why_len, "mkdir %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	if (uid != 0 && chown(dir, uid, uid) == -1) {
		err_set(why, why_len, "chown %s to kernel identity %d: %s", dir, (int)uid,
			strerror(errno));
		rmdir(dir);
		free(dir);
		return NULL;
	}
	make_pkgs_dir(dir, uid);
	return dir;
}

/* 1 if kernels' groups have controller c. */
static int
usable(const struct launcher *l, enum cgroup_ctl c)
{
	return l->cgroups && l->cgroups->version[c] != 0;
}

/* The strings of a JSON array (argv) as a vector. Caller frees. */
static char **
strings_of(struct json_object *a)
{
	size_t n = json_object_array_length(a);
	char **v = xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(json_object_get_string(json_object_array_get_idx(a, i)));
	return v;
}

/*
 * For a seccomp kernel, which may connect() nowhere: each socket: true
 * sidecar's descriptor broker (relay.h), inherited already connected as
 * {url_env_var}_SOCKET_FD. NULL for the other modes or no such sidecar.
 */
static char **
sidecar_unix_fds(const struct config *cfg)
{
	char **v = NULL;
	size_t n = 0;

	if (cfg->kernel_network_mode != NET_SECCOMP)
		return NULL;
	for (size_t i = 0; i < cfg->sidecars.n; i++) {
		const struct config_sidecar *sc = &cfg->sidecars.v[i];
		if (sc->socket_path == NULL)
			continue;
		v = xreallocarray(v, n + 2, sizeof(*v));
		v[n++] = xasprintf("%s_SOCKET_FD=%s" RELAY_BROKER_SUFFIX, sc->url_env_var,
				   sc->socket_path);
		v[n] = NULL;
	}
	return v;
}

/* Send START to the worker on `fd`: its kernel command, environment, places
 * and sandbox. 0, or -1 with errno. */
static int
send_start(const struct launcher *l, const struct launched *w, uid_t uid)
{
	const struct config *cfg = l->cfg;
	struct json_object *argv = kernel_env_argv(cfg);
	struct json_object *env = kernel_env_build(cfg);
	char *warm = kernel_warm_code(cfg);
	/* A limit whose controller is unusable here (and not required) goes. */
	struct ipc_limits lim = {
		.memory_mb = usable(l, CGROUP_MEMORY) ? (uint64_t)cfg->limit_memory_mb : 0,
		.pids = usable(l, CGROUP_PIDS) ? (uint64_t)cfg->limit_pids : 0,
		.cpu = usable(l, CGROUP_CPU) ? cfg->limit_cpu : 0,
		.nofile = (uint64_t)cfg->limit_nofile,
		.fsize_mb = (uint64_t)cfg->limit_fsize_mb,
	};
	struct ipc_cgroup cg;
	struct ipc_cgroup_ctl ctl[CGROUP_NCTL];

	kernel_env_session(cfg, env, w->workdir);
	char **unix_fds = sidecar_unix_fds(cfg);
	/* What of the daemon a kernel of its uid could read: Landlock hides it. */
	char *hide[] = {cfg->file, cfg->state_dir, cfg->runtime_dir, NULL};
	struct ipc_start st = {
		.argv = strings_of(argv),
		.env = kernel_env_strings(env),
		.cwd = w->workdir,
		.runtime_dir = w->rundir,
		.allow_mime = kernel_env_mime(cfg, NULL),
		.warm_code = warm,
		.interrupt_mode = cfg->kernel_interrupt_message ? IPC_INTERRUPT_MESSAGE
								: IPC_INTERRUPT_SIGNAL,
		.startup_timeout_s = STARTUP_TIMEOUT_S,
		.network_mode = cfg->kernel_network_mode,
		.uid = (uint32_t)uid,
		.gid = (uint32_t)uid,
		.limits = &lim,
		.unix_fds = unix_fds,
		.upstreams = cfg->upstreams.n > 0,
		.egress_socket = egress_socket_for(cfg, w->name),
		.landlock_abi = cfg->landlock_abi,
		.hide_paths = hide,
	};
	if (l->cgroups) {
		ipc_cgroup_from_layout(&cg, ctl, l->cgroups, strrchr(w->rundir, '/') + 1);
		st.cgroup = &cg;
	}
	int rc = ipc_msg_send(w->fd, IPC_START, 0, &st);
	int saved = errno;
	strv_free(st.argv);
	strv_free(st.env);
	strv_free(st.allow_mime);
	strv_free(unix_fds);
	free(st.egress_socket);
	free(warm);
	json_object_put(argv);
	json_object_put(env);
	errno = saved;
	return rc;
}

/* posix_spawn the worker with `child_fd` as its fd 3 and `rescue_fd` as
 * its fd 4 (both above 4, so that neither dup2 undoes the other). 0, or
 * an errno. */
static int
spawn(const struct launcher *l, int child_fd, int rescue_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {(char *)"codeexec-worker", l->verbose ? (char *)"-v" : NULL, NULL};
	char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, child_fd, IPC_WORKER_FD);
	posix_spawn_file_actions_adddup2(&fa, rescue_fd, IPC_RESCUE_FD);
	int rc = posix_spawn(pid, l->worker_path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* Undo a launch that failed after the spawn: the worker dies unreaped by
 * anyone else, so reap it here. */
static void
abandon(struct launched *w)
{
	int status;

	kill(w->pid, SIGKILL);
	while (waitpid(w->pid, &status, 0) == -1 && errno == EINTR)
		;
	close(w->fd);
	close(w->rescue);
}

/* A descriptor of ours moved above fd 4, close-on-exec; -1 (errno) on failure. */
static int
above_rescue(int fd)
{
	if (fd > IPC_RESCUE_FD)
		return fd;
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, IPC_RESCUE_FD + 1);
	int saved = errno;
	close(fd);
	errno = saved;
	return moved;
}

/* The worker's socket and the parent's line to it: 0 with sv[] and rv[]
 * (the child's ends [1], above fd 4), or -1 with why[why_len]. */
static int
worker_sockets(int sv[2], int rv[2], char *why, size_t why_len)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return err_set(why, why_len, "socketpair for a worker: %s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rv) == -1) {
		err_set(why, why_len, "socketpair for a worker's line to the parent: %s",
			strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	sv[1] = above_rescue(sv[1]);
	rv[1] = above_rescue(rv[1]);
	if (sv[1] != -1 && rv[1] != -1)
		return 0;
	err_set(why, why_len, "move a worker's descriptors above fd %d: %s", IPC_RESCUE_FD,
		strerror(errno));
	int all[] = {sv[0], sv[1], rv[0], rv[1]};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] != -1)
			close(all[i]);
	return -1;
}

/*
 * The kept directory `reuse` of an earlier worker, for uid: the last
 * component is its name, and it must still be a directory of that owner
 * (never followed if a link). Caller owns the path; NULL on failure.
 */
static char *
kept_workdir(const char *reuse, uid_t uid, char name[PRIV_NAME_LEN + 1], char *why,
	     size_t why_len)
{
	const char *base = strrchr(reuse, '/');
	uid_t owner = uid != 0 ? uid : geteuid(); /* make_workdir's */
	struct stat st;

	if (base == NULL || strlen(base + 1) != PRIV_NAME_LEN) {
		err_set(why, why_len, "%s is not a session directory", reuse);
		return NULL;
	}
	if (lstat(reuse, &st) == -1) {
		err_set(why, why_len, "lstat %s: %s", reuse, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != owner) {
		err_set(why, why_len, "the kept session directory %s is no longer a directory of "
			"uid %d", reuse, (int)owner);
		return NULL;
	}
	memcpy(name, base + 1, PRIV_NAME_LEN + 1);
	return xstrdup(reuse);
}

int
worker_launch(const struct launcher *l, uid_t uid, const char *reuse, struct launched *out,
	      char *why, size_t why_len)
{
	int sv[2], rv[2];
	char id[PRIV_NAME_LEN + 1];

	memset(out, 0, sizeof(*out));
	if (reuse) {
		out->workdir = kept_workdir(reuse, uid, out->name, why, why_len);
	} else {
		rand_hex(out->name, PRIV_NAME_LEN / 2);
		out->workdir = make_workdir(l->cfg, out->name, uid, why, why_len);
	}
	if (out->workdir == NULL)
		return -1;
	if (worker_sockets(sv, rv, why, why_len) == -1)
		goto fail_dir;
	int rc = spawn(l, sv[1], rv[1], &out->pid);
	close(sv[1]);
	close(rv[1]);
	if (rc != 0) {
		err_set(why, why_len, "spawn worker %s: %s", l->worker_path, strerror(rc));
		close(sv[0]);
		close(rv[0]);
		goto fail_dir;
	}
	out->fd = sv[0];
	out->rescue = rv[0];
	rand_hex(id, PRIV_NAME_LEN / 2);
	out->rundir = xasprintf("%s/k-%s", l->cfg->runtime_dir, id);
	if (send_start(l, out, uid) == -1) {
		err_set(why, why_len, "send START to worker %d: %s", (int)out->pid,
			strerror(errno));
		abandon(out);
		free(out->rundir);
		goto fail_dir;
	}
	log_debug("worker %d started for %s", (int)out->pid, out->workdir);
	return 0;

fail_dir:
	if (reuse == NULL) /* a kept one stays for the next try */
		fs_remove_tree(out->workdir);
	free(out->workdir);
	memset(out, 0, sizeof(*out));
	return -1;
}
