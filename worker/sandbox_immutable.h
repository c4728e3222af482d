/*
 * sandbox_immutable.h - the immutable-environment rule of
 * kernel_network_mode seccomp.
 *
 * A seccomp kernel runs code from disk before its filter exists (the
 * loader, the interpreter, its library and package roots), so none of it
 * may be changeable by the kernel's identity: no path it loads, no
 * directory above one, no target of a symbolic link among them may be
 * owned by that identity or writable by it or one of its groups, and no
 * startup variable may steer the loader, Python, IPython or Jupyter.
 * Owns that check; sandbox_seccomp.c decides what it is applied to.
 * It uses nothing of sandbox.h.
 */
#ifndef WORKER_SANDBOX_IMMUTABLE_H
#define WORKER_SANDBOX_IMMUTABLE_H

#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

#define SANDBOX_IDENT_GROUPS 64

/* The identity the rule is checked against. */
struct sandbox_ident {
	uid_t uid;
	gid_t groups[SANDBOX_IDENT_GROUPS];
	int ngroups;
};

/* Fill *id with the kernel's identity: uid/gid if has_id, else ours with our groups. */
void sandbox_immutable_ident(struct sandbox_ident *id, int has_id, uid_t uid, gid_t gid);
/*
 * The rule for `path` (absolute): its parents, itself, the tree below it,
 * symbolic links followed to their targets. 0, or -1 with why[why_len].
 */
int sandbox_immutable_path(const char *path, const struct sandbox_ident *id, char *why,
			   size_t why_len);
/*
 * Reject the startup variables of envp that act before the filter, and
 * hold LD_LIBRARY_PATH's entries to the rule. 0, or -1 with why[why_len].
 */
int sandbox_immutable_env(char **envp, const struct sandbox_ident *id, char *why,
			  size_t why_len);
/*
 * Every string of array `key` of o (borrowed) under the rule; 0, or -1
 * with why[why_len] (also when o has no such array).
 */
int sandbox_immutable_array(struct json_object *o, const char *key, const struct sandbox_ident *id,
			    char *why, size_t why_len);

#endif
