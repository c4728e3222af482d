/* control_socket.c - see control_socket.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "control_access.h"
#include "control_proto.h"
#include "control_socket.h"
#include "fsutil.h"
#include "log.h"
#include "privdrop.h"

/* Work out who may use the socket; fatal on a bad control_group. */
static void
control_identities(struct control_access *a)
{
	const struct config *cfg = a->cfg;
	char err[512];
	uid_t uid;
	gid_t gid;

	if (privdrop_lookup(cfg, &uid, &gid, err, sizeof(err)) == -1)
		fatalx("%s", err);
	a->daemon_uid = geteuid() == 0 && uid != (uid_t)-1 ? uid : geteuid();
	a->kernel_gid = geteuid() == 0 && uid != (uid_t)-1 ? gid : getegid();
	a->admin_ok = a->daemon_uid != 0 && !control_kernel_id(a, a->daemon_uid, 0);
	if (cfg->control_group == NULL || cfg->control_group[0] == '\0')
		return;
	struct group *gr = getgrnam(cfg->control_group);
	if (gr == NULL)
		fatalx("control_group %s: no such group", cfg->control_group);
	if (control_kernel_id(a, gr->gr_gid, 1))
		fatalx("control_group %s (gid %d) is a group kernels run as: choose a group of "
		       "operators only",
		       cfg->control_group, (int)gr->gr_gid);
	a->control_gid = gr->gr_gid;
}

/*
 * runtime_dir/control, 0700 (0750 with control_group's gid), so that
 * kernels of other ids cannot reach the socket at all. Made before
 * privileges are dropped: with `user` it stays root's, so even kernels
 * sharing the daemon's uid cannot enter, rename or replace it; only when
 * no kernel has the daemon's uid is it given to that uid.
 */
static int
make_control_dir(const struct control_access *a, const char *sock_dir)
{
	mode_t mode = a->control_gid != (gid_t)-1 ? 0750 : 0700;
	uid_t owner = a->admin_ok && geteuid() == 0 ? a->daemon_uid : geteuid();
	struct stat st;

	for (int attempt = 0;; attempt++) {
		if (mkdir(sock_dir, mode) == -1 && errno != EEXIST) {
			log_warn("mkdir %s", sock_dir);
			return -1;
		}
		if (lstat(sock_dir, &st) == -1) {
			log_warn("stat %s", sock_dir);
			return -1;
		}
		if (S_ISDIR(st.st_mode) && (st.st_uid == owner || st.st_uid == geteuid()))
			break;
		/*
		 * Left by a daemon of another configuration, or planted by a
		 * kernel that owned runtime_dir: root starts afresh, once.
		 */
		if (attempt > 0 || geteuid() != 0 || fs_remove_tree(sock_dir) == -1) {
			log_warnx("%s is not a directory of this daemon (uid %d); no control socket",
				  sock_dir, (int)st.st_uid);
			return -1;
		}
	}
	int fd = open(sock_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || (st.st_uid != owner && st.st_uid != geteuid())) {
		log_warn("open %s", sock_dir);
		if (fd != -1)
			close(fd);
		return -1;
	}
	int rc = 0;
	if (fchown(fd, owner, a->control_gid) == -1 || fchmod(fd, mode) == -1) {
		log_warn("chown/chmod %s", sock_dir);
		rc = -1;
	}
	close(fd);
	return rc;
}

int
control_open(const struct config *c, struct control_access *a)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char sock_dir[sizeof(sun.sun_path)];
	int fd;

	*a = (struct control_access){.cfg = c, .started = time(NULL), .control_gid = (gid_t)-1};
	control_identities(a);
	if ((size_t)snprintf(sock_dir, sizeof(sock_dir), "%s/" CONTROL_SOCKET_DIR, c->runtime_dir) >=
		    sizeof(sock_dir) ||
	    (size_t)snprintf(a->path, sizeof(a->path), "%s/" CONTROL_SOCKET_FILE, sock_dir) >=
		    sizeof(a->path)) {
		log_warnx("control socket path under %s is too long; no control socket",
			  c->runtime_dir);
		return -1;
	}
	if (make_control_dir(a, sock_dir) == -1)
		return -1;
	memcpy(sun.sun_path, a->path, sizeof(a->path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		log_warn("control socket");
		return -1;
	}
	unlink(a->path);
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	uid_t owner = a->admin_ok && geteuid() == 0 ? a->daemon_uid : geteuid();
	if (rc == 0 && (chown(a->path, owner, a->control_gid) == -1 ||
			(a->control_gid != (gid_t)-1 && chmod(a->path, 0660) == -1)))
		rc = -1;
	if (rc == -1 || listen(fd, 8) == -1) {
		log_warn("control socket %s", a->path);
		close(fd);
		return -1;
	}
	return fd;
}

int
control_present(const struct control_access *a)
{
	struct stat st;
	if (a->path[0] == '\0')
		return 0;
	/* Made as root before the drop, its directory is closed to us now: there. */
	if (lstat(a->path, &st) == -1)
		return errno == EACCES;
	return S_ISSOCK(st.st_mode);
}

void
control_close(const struct control_access *a, int fd)
{
	if (fd == -1)
		return;
	close(fd);
	unlink(a->path);
}
