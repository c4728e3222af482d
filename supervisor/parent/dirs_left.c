/* dirs_left.c - see dirs_left.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "dirs_left.h"
#include "hex.h"
#include "log.h"
#include "remover.h"
#include "xmalloc.h"

/* The kernel identity a directory of owner `owner` belongs to: 0 for the
 * daemon's, the uid for one of the range; -1: neither. */
static long
identity_of(const struct config *cfg, uid_t own, uid_t owner)
{
	if (cfg->kernel_uid_first && owner >= cfg->kernel_uid_first &&
	    owner <= cfg->kernel_uid_last)
		return (long)owner;
	return owner == own ? 0 : -1;
}

int
dirs_left_each(const struct config *cfg, uid_t own,
	       void (*fn)(const char *dir, const char name[PRIV_NAME_LEN + 1], uid_t uid,
			  void *arg),
	       void *arg)
{
	char *sessions = xasprintf("%s/sessions", cfg->state_dir);
	DIR *d = opendir(sessions);
	struct dirent *e;
	int found = 0;

	if (d == NULL) {
		log_warn("opendir %s", sessions);
		free(sessions);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *path = xasprintf("%s/%s", sessions, e->d_name);
		long id = -1;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			log_warn("lstat %s", path);
		else if (hex_is(e->d_name, PRIV_NAME_LEN) && S_ISDIR(st.st_mode))
			id = identity_of(cfg, own, st.st_uid);
		if (id >= 0) {
			fn(path, e->d_name, (uid_t)id, arg);
			found++;
			free(path);
		} else {
			log_warnx("%s is no session directory this daemon made: removing it", path);
			remover_add(path); /* owns it */
		}
	}
	closedir(d);
	free(sessions);
	return found;
}
