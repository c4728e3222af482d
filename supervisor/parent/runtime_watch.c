/* runtime_watch.c - see runtime_watch.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "control_socket.h"
#include "fsutil.h"
#include "log.h"
#include "parent.h"
#include "runtime_watch.h"
#include "xmalloc.h"

static char *pidfile;
/* runtime_dir could not be made again (said once, until it can). */
static int was_degraded;

static void
degraded(const char *why)
{
	if (!was_degraded)
		log_warnx("%s", why);
	was_degraded = 1;
	parent_tell_front(PRIV_RUNTIME_DEGRADED, why, -1);
}

/* Write our pid to `path`. 0, or -1 with errno set. */
static int
pidfile_put(const char *path)
{
	FILE *f = fopen(path, "we");
	if (f == NULL)
		return -1;
	int bad = fprintf(f, "%d\n", (int)getpid()) < 0;
	if (fclose(f) == EOF || bad)
		return -1;
	return 0;
}

/*
 * runtime_dir holds the control socket, the pid file and every new
 * kernel's sockets. If it, the socket or the pid file disappears (a tmpfs
 * cleaned under us, an operator's rm -rf), make them again and hand the
 * front the new control socket; until that works, the front's /health
 * says degraded and why. Sessions that run keep their kernels: their
 * sockets are connected already.
 */
void
runtime_watch(struct parent_args *a)
{
	const struct config *cfg = a->cfg;
	struct stat st;
	char err[512], why[1024];

	int dir_ok = stat(cfg->runtime_dir, &st) == 0 && S_ISDIR(st.st_mode);
	int sock_ok = a->control_fd == -1 || control_present(a->control);
	if (dir_ok && sock_ok && access(pidfile, F_OK) == 0) {
		if (was_degraded) {
			was_degraded = 0;
			parent_tell_front(PRIV_RUNTIME_RENEWED, NULL, -1);
		}
		return;
	}
	if (!dir_ok)
		log_warnx("runtime_dir %s has disappeared; making it again", cfg->runtime_dir);
	if (fs_mkdir_p(cfg->runtime_dir, 0711, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "runtime_dir is gone and cannot be made again: %s",
			 err);
		return degraded(why);
	}
	if (stat(cfg->runtime_dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof(why), "runtime_dir %s is not a directory: no new kernel "
			 "can start and the control socket is gone", cfg->runtime_dir);
		return degraded(why);
	}
	int renewed_fd = -1;
	if (!sock_ok) {
		control_close(a->control, a->control_fd);
		a->control_fd = control_open(cfg, a->control);
		if (a->control_fd == -1) {
			snprintf(why, sizeof(why), "the control socket in runtime_dir %s cannot "
				 "be made again (see the log)", cfg->runtime_dir);
			return degraded(why);
		}
		renewed_fd = a->control_fd;
		log_info("control socket in %s made again", cfg->runtime_dir);
	}
	if (access(pidfile, F_OK) == -1 && pidfile_put(pidfile) == -1) {
		snprintf(why, sizeof(why), "cannot write the pid file %s again: %s", pidfile,
			 strerror(errno));
		return degraded(why);
	}
	was_degraded = 0;
	parent_tell_front(PRIV_RUNTIME_RENEWED, NULL, renewed_fd);
}


void
runtime_pidfile_write(const struct config *cfg)
{
	pidfile = xasprintf("%s/codeexecd.pid", cfg->runtime_dir);
	if (pidfile_put(pidfile) == -1)
		fatal("write pid file %s", pidfile);
}

void
runtime_pidfile_remove(void)
{
	if (pidfile == NULL)
		return;
	unlink(pidfile);
	free(pidfile);
	pidfile = NULL;
}
