/* unix_listen.c - see unix_listen.h. */
#include "autoconf.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"
#include "unix_listen.h"

int
unix_listen_at(const char *path, mode_t mode, char *why, size_t why_len)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return err_set(why, why_len, "socket path %s is too long", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
		return err_set(why, why_len, "socket for %s: %s", path, strerror(errno));
	/* Made with the mode it keeps: no moment when others could connect. */
	mode_t old = umask(0777 & ~mode);
	int rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == -1 || chmod(path, mode) == -1 || listen(fd, 64) == -1) {
		err_set(why, why_len, "listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
