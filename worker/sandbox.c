/* sandbox.c - see sandbox.h: START's sandbox fields and the steps every mode shares. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cap-ng.h>

#include "landlock.h"
#include "log.h"
#include "sandbox.h"
#include "sandbox_steps.h"
#include "xmalloc.h"

#define MB (1024ull * 1024)

/* 1 if we hold what an identity switch takes without being root. */
static int
can_switch_identity(void)
{
	capng_get_caps_process();
	return capng_have_capability(CAPNG_EFFECTIVE, CAP_SETUID) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_SETGID);
}

int
sandbox_from_start(struct sandbox *sb, const struct ipc_start *st, char *why, size_t why_len)
{
	/* ipc_decode.c checked types, bounds and that limits come with a cgroup. */
	sb->mode = st->network_mode;
	if (st->uid != 0) {
		sb->has_id = 1;
		sb->uid = (uid_t)st->uid;
		sb->gid = (gid_t)st->gid;
	}
	if (st->limits) {
		sb->limits.memory_mb = st->limits->memory_mb;
		sb->limits.pids = st->limits->pids;
		sb->limits.cpu = st->limits->cpu;
		sb->nofile = (rlim_t)st->limits->nofile;
		sb->fsize = (rlim_t)st->limits->fsize_mb * MB;
	}
	if (st->cgroup) {
		ipc_cgroup_to_layout(st->cgroup, &sb->layout);
		sb->cgroup_name = xstrdup(st->cgroup->name);
		sb->has_cgroup = 1;
	}
	sb->landlock_abi = st->landlock_abi;
	if (st->egress_socket)
		sb->egress_socket = xstrdup(st->egress_socket);
	int abi = landlock_abi();
	if (sb->landlock_abi > abi)
		return err_set(why, why_len, "kernel_landlock: START asks for Landlock ABI %d, "
			       "and this kernel offers %d", sb->landlock_abi, abi);
	if (sb->has_id && geteuid() != 0 && !can_switch_identity())
		return err_set(why, why_len, "uid/gid need the worker to run as root "
			       "(or with CAP_SETUID and CAP_SETGID)");
	/* The group is the worker's: a kernel of the same uid could write its limits. */
	if ((sb->limits.memory_mb || sb->limits.pids || sb->limits.cpu > 0) && !sb->has_id &&
	    geteuid() != 0)
		return err_set(why, why_len,
			       "limits.memory_mb, pids and cpu need uid/gid: a kernel "
			       "of the worker's own uid would own its cgroup and could raise its limits");
	return 0;
}

void
sandbox_free(struct sandbox *sb)
{
	cgroup_destroy(&sb->cg);
	cgroup_layout_free(&sb->layout);
	free(sb->cgroup_name);
	free(sb->helper);
	strv_free(sb->hide_paths);
	free(sb->egress_socket);
	sb->cgroup_name = sb->helper = sb->egress_socket = NULL;
	sb->hide_paths = NULL;
}

int
sandbox_cgroup_create(struct sandbox *sb, char *why, size_t why_len)
{
	if (!sb->has_cgroup)
		return 0;
	if (sb->cg == NULL) {
		sb->cg = cgroup_create(&sb->layout, sb->cgroup_name, &sb->limits, why, why_len);
		if (sb->cg == NULL)
			return -1;
	} else {
		cgroup_kill_all(sb->cg); /* what the last kernel left behind */
	}
	sb->oom_base = cgroup_oom_kills(sb->cg);
	return 0;
}

int
sandbox_oom_killed(struct sandbox *sb)
{
	return sb->cg && cgroup_oom_kills(sb->cg) > sb->oom_base;
}

/* Give path (in a directory we own) to the kernel's identity, never through a link. */
static int
give(const char *dir, const char *name, const struct sandbox *sb, char *why, size_t why_len)
{
	if (fchownat(AT_FDCWD, name ? name : dir, sb->uid, sb->gid, AT_SYMLINK_NOFOLLOW) == -1) {
		err_set(why, why_len, "chown %s%s%s: %s", dir, name ? "/" : "", name ? name : "",
			strerror(errno));
		return -1;
	}
	return 0;
}

int
sandbox_prepare(struct sandbox *sb, char **argv, char **envp, const char *cwd,
		const char *runtime_dir, struct sandbox_launch *ln, char *why, size_t why_len)
{
	memset(ln, 0, sizeof(*ln));
	ln->pass_fd = ln->ll_fd = ln->sc_sock[0] = ln->sc_sock[1] = ln->egress_dir = -1;
	/* The kernel binds its sockets there (its connection file is a memfd, kernel_spawn.c). */
	if (sb->has_id && give(runtime_dir, NULL, sb, why, why_len) == -1)
		return -1;
	if (sb->cg && (ln->n_cg_fds = cgroup_procs_fds(sb->cg, ln->cg_fds, why, why_len)) == -1) {
		ln->n_cg_fds = 0;
		return -1;
	}
	if (sb->mode == NET_ISOLATED &&
	    sandbox_isolated_prepare(sb, argv, envp, cwd, runtime_dir, ln, why, why_len) == -1)
		return -1;
	if (sb->mode == NET_SECCOMP && sandbox_seccomp_locks_itself(argv) &&
	    sandbox_seccomp_prepare(sb, argv, envp, cwd, runtime_dir, ln, why, why_len) == -1)
		return -1;
	if (sb->mode == NET_SECCOMP && !sandbox_seccomp_locks_itself(argv) &&
	    sandbox_seccomp_gate_prepare(ln, why, why_len) == -1)
		return -1;
	/* After seccomp's, whose startup and helper the kernel must read too. */
	if (sb->landlock_abi == 0)
		return 0;
	return sandbox_landlock_prepare(sb, ln->argv ? ln->argv : argv, ln->envp ? ln->envp : envp,
					cwd, runtime_dir, ln, why, why_len);
}

void
sandbox_launch_free(struct sandbox_launch *ln)
{
	for (int i = 0; i < ln->n_cg_fds; i++)
		close(ln->cg_fds[i]);
	ln->n_cg_fds = 0;
	for (int i = 0; i < ln->n_keep; i++)
		free(ln->keep_path[i]);
	ln->n_keep = 0;
	for (int i = 0; i < ln->n_hide_dir; i++)
		free(ln->hide_dir[i]);
	ln->n_hide_dir = 0;
	for (int i = 0; i < ln->n_unix_fds; i++)
		close(ln->unix_fds[i]);
	ln->n_unix_fds = 0;
	if (ln->ll_fd >= 0)
		close(ln->ll_fd);
	ln->ll_fd = -1;
	for (int i = 0; i < 2; i++)
		if (ln->sc_sock[i] >= 0)
			close(ln->sc_sock[i]);
	ln->sc_sock[0] = ln->sc_sock[1] = -1;
	if (ln->egress_dir >= 0)
		close(ln->egress_dir);
	ln->egress_dir = -1;
	free(ln->sc_gate.filter);
	free(ln->sc_deny.filter);
	ln->sc_gate.filter = ln->sc_deny.filter = NULL;
	strv_free(ln->argv);
	strv_free(ln->envp);
	free(ln->start_dir);
	ln->argv = ln->envp = NULL;
	ln->start_dir = NULL;
}

/* The texts of the child's failure stages. */
static const struct {
	int stage;
	const char *text;
} stage_texts[] = {
	{SANDBOX_STAGE_CGROUP, "cannot enter the kernel's cgroup"},
	{SANDBOX_STAGE_RLIMIT, "cannot set RLIMIT_NOFILE/RLIMIT_FSIZE"},
	{SANDBOX_STAGE_IDENTITY, "cannot switch to the kernel's uid/gid"},
	{SANDBOX_STAGE_USERNS, "kernel_network_mode isolated: cannot create user and network namespaces"},
	{SANDBOX_STAGE_MAPS, "kernel_network_mode isolated: cannot write the user namespace's uid/gid maps"},
	{SANDBOX_STAGE_LOOPBACK, "kernel_network_mode isolated: cannot bring up loopback in the network namespace"},
	{SANDBOX_STAGE_CAPS, "cannot drop the kernel's capabilities and bounding set"},
	{SANDBOX_STAGE_NNP, "cannot set no_new_privs"},
	{SANDBOX_STAGE_MOUNTS, "kernel_network_mode isolated: cannot mount private /tmp, /run and the daemon's directories"},
	{SANDBOX_STAGE_PIDNS, "kernel_network_mode isolated: cannot start the kernel in a pid namespace with its own /proc"},
	{SANDBOX_STAGE_EGRESS, "kernel_network_mode isolated: cannot listen on 127.0.0.1:3128 in the namespace or start the forwarder to the egress proxy"},
	{SANDBOX_STAGE_LANDLOCK, "kernel_landlock: cannot confine the kernel with Landlock"},
	{SANDBOX_STAGE_SECCOMP, "kernel_network_mode seccomp: cannot install the kernel's seccomp filters"},
	{SANDBOX_STAGE_NESTED, "kernel_network_mode isolated: cannot set user.max_user_namespaces in the kernel's namespace"},
};

const char *
sandbox_stage_text(int stage)
{
	for (size_t i = 0; i < sizeof(stage_texts) / sizeof(stage_texts[0]); i++)
		if (stage_texts[i].stage == stage)
			return stage_texts[i].text;
	return "cannot set up the kernel process";
}

/* Fail at step `st` keeping errno. */
static int
fail_at(int *stage, int st)
{
	*stage = st;
	return -1;
}

int
sandbox_child(const struct sandbox *sb, const struct sandbox_launch *ln, int *stage)
{
	if (sandbox_enter_cgroup(ln->cg_fds, ln->n_cg_fds) == -1)
		return fail_at(stage, SANDBOX_STAGE_CGROUP);
	if (sandbox_set_rlimits(sb->nofile, sb->fsize) == -1)
		return fail_at(stage, SANDBOX_STAGE_RLIMIT);
	if (sb->has_id && sandbox_become(sb->uid, sb->gid) == -1)
		return fail_at(stage, SANDBOX_STAGE_IDENTITY);
	if (sb->mode == NET_ISOLATED && sandbox_isolated_child(sb, ln, stage) == -1)
		return -1;
	/*
	 * inherit without an identity takes nothing but the ambient capabilities
	 * a worker of the daemon's shared user holds to keep control groups
	 * root's (privdrop.c), which the kernel would otherwise inherit;
	 * no_new_privs stays unset unless Landlock needs it. (A root worker
	 * only runs so in tests: the daemon refuses root kernels.)
	 */
	if (sb->mode == NET_INHERIT && !sb->has_id) {
		if (geteuid() != 0 && sandbox_drop_caps() == -1)
			return fail_at(stage, SANDBOX_STAGE_CAPS);
		if (ln->ll_fd < 0)
			return 0;
	} else if (sandbox_drop_caps() == -1) {
		return fail_at(stage, SANDBOX_STAGE_CAPS);
	}
	/* Landlock needs no_new_privs: a confined kernel never gains privilege by exec. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return fail_at(stage, SANDBOX_STAGE_NNP);
	if (ln->ll_fd >= 0 && sandbox_landlock_child(ln) == -1)
		return fail_at(stage, SANDBOX_STAGE_LANDLOCK);
	/* Last: the deny list refuses sendmsg, which passes the gate's listener. */
	if (ln->sc_deny.filter && sandbox_seccomp_gate_child(ln) == -1)
		return fail_at(stage, SANDBOX_STAGE_SECCOMP);
	return 0;
}
