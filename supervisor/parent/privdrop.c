/* privdrop.c - see privdrop.h. */
#include "autoconf.h"

#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fsutil.h"
#include "log.h"
#include "privdrop.h"

/* A capability the supervisor may keep, and when it needs it. */
struct kept_cap {
	int cap;
	const char *name;
	int (*needed)(const struct config *cfg, int cgroups);
	const char *why;
};

static int
kernel_identities(const struct config *cfg, int cgroups)
{
	(void)cgroups;
	return cfg->kernel_uid_first != 0;
}

/* Kernels share our user and live in control groups, which must stay root's. */
static int
shared_uid_cgroups(const struct config *cfg, int cgroups)
{
	return cgroups && cfg->kernel_uid_first == 0;
}

static const struct kept_cap kept_caps[] = {
	{CAP_SETUID, "setuid", kernel_identities,
	 "workers start each kernel under its own kernel_uid_range user"},
	{CAP_SETGID, "setgid", kernel_identities, "... and its own group"},
	{CAP_CHOWN, "chown", kernel_identities,
	 "give each kernel's working directory and spill files to its identity"},
	{CAP_DAC_OVERRIDE, "dac_override", kernel_identities,
	 "remove a finished session's directory, which its kernel owns (mode 0700)"},
	{CAP_FOWNER, "fowner", kernel_identities,
	 "... including files the kernel made unwritable"},
	{CAP_KILL, "kill", kernel_identities,
	 "end kernels that run under other identities (timeouts, shutdown)"},
	{CAP_DAC_OVERRIDE, "dac_override", shared_uid_cgroups,
	 "make, enter and remove kernels' control groups in the root-owned, 0700 parents "
	 "that kernels of this uid cannot reach"},
	{CAP_CHOWN, "chown", shared_uid_cgroups,
	 "give each kernel's new control group to root, so that no kernel of this uid can "
	 "make a group or move a process in the tree"},
};

int
privdrop_lookup(const struct config *cfg, uid_t *uid, gid_t *gid, char *why, size_t why_len)
{
	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (cfg->user == NULL || cfg->user[0] == '\0')
		return 0;
	struct passwd *pw = getpwnam(cfg->user);
	if (pw == NULL) {
		snprintf(why, why_len, "user %s: no such user", cfg->user);
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	if (cfg->group && cfg->group[0]) {
		struct group *gr = getgrnam(cfg->group);
		if (gr == NULL) {
			snprintf(why, why_len, "group %s: no such group", cfg->group);
			return -1;
		}
		*gid = gr->gr_gid;
	}
	return 0;
}

/* Give the directories the daemon writes to its user. */
static int
give_directories(const struct config *cfg, uid_t uid, gid_t gid, char *why, size_t why_len)
{
	const char *dirs[] = {cfg->state_dir, cfg->runtime_dir};
	char sessions[4096];

	snprintf(sessions, sizeof(sessions), "%s/sessions", cfg->state_dir);
	for (size_t i = 0; i < 2; i++) {
		if (chown(dirs[i], uid, gid) == -1) {
			snprintf(why, why_len, "chown %s: %s", dirs[i], strerror(errno));
			return -1;
		}
	}
	if (chown(sessions, uid, gid) == -1) {
		snprintf(why, why_len, "chown %s: %s", sessions, strerror(errno));
		return -1;
	}
	return 0;
}

int
privdrop_apply(const struct config *cfg, int cgroups, char *why, size_t why_len)
{
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0)
		return 0; /* an ordinary user runs as itself */
	if (privdrop_lookup(cfg, &uid, &gid, why, why_len) == -1)
		return -1;
	if (uid == (uid_t)-1) {
		log_warnx("running as root: set user in the configuration so that codeexecd "
			  "drops to an unprivileged user after start-up");
		return 0;
	}
	if (give_directories(cfg, uid, gid, why, why_len) == -1)
		return -1;
	capng_clear(CAPNG_SELECT_ALL);
	for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++) {
		if (!kept_caps[i].needed(cfg, cgroups))
			continue;
		capng_update(CAPNG_ADD,
			     CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_INHERITABLE |
				     CAPNG_BOUNDING_SET | CAPNG_AMBIENT,
			     (unsigned)kept_caps[i].cap);
		log_info("keeping CAP_%s: %s", kept_caps[i].name, kept_caps[i].why);
	}
	int rc = capng_change_id((int)uid, (int)gid, CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
	if (rc != 0) {
		snprintf(why, why_len, "cannot change to user %s (libcap-ng error %d): %s",
			 cfg->user, rc, strerror(errno));
		return -1;
	}
	/* change_id applies the permitted set; the ambient set needs its own call. */
	if (capng_apply(CAPNG_SELECT_AMBIENT) != 0) {
		snprintf(why, why_len, "cannot set ambient capabilities: %s", strerror(errno));
		return -1;
	}
	log_info("running as %s (uid %d, gid %d)", cfg->user, (int)uid, (int)gid);
	return 0;
}
