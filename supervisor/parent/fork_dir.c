/* fork_dir.c - see fork_dir.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "fork_dir.h"
#include "fs_tree.h"
#include "log.h"
#include "rand.h"
#include "uid.h"
#include "xmalloc.h"

static const struct config *fork_cfg;

void
fork_dir_init(const struct config *cfg)
{
	fork_cfg = cfg;
}

/* A new session directory state_dir/sessions/NAME of kernel identity uid
 * (0: ours), open in *fd. Its path (caller owns), or NULL with why. */
static char *
make_copy_dir(char name[PRIV_NAME_LEN + 1], uid_t uid, int *fd, char *why, size_t why_len)
{
	rand_hex(name, PRIV_NAME_LEN / 2);
	char *path = xasprintf("%s/sessions/%s", fork_cfg->state_dir, name);

	*fd = -1;
	if (mkdir(path, 0700) == -1) {
		err_set(why, why_len, "mkdir %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd == -1 || (uid != 0 && fchown(*fd, uid, uid) == -1)) {
		err_set(why, why_len, "open or chown %s to kernel identity %d: %s", path,
			(int)uid, strerror(errno));
		if (*fd != -1)
			close(*fd);
		*fd = -1;
		rmdir(path);
		free(path);
		return NULL;
	}
	return path;
}

/* Copy directory in into the new one, out. 0, or -1 with why. */
static int
copy_into(int in, int out, uid_t uid, const char *src, struct fs_copy_stats *st, char *why,
	  size_t why_len)
{
	uid_t owner = uid != 0 ? uid : (uid_t)-1;
	struct stat sb;

	/* Only what the source's kernel (or we) made there: never a hard link
	 * to a file of another that our privilege could read. */
	if (fstat(in, &sb) == -1)
		return err_set(why, why_len, "fstat %s: %s", src, strerror(errno));
	if (fs_copy_tree(in, out, sb.st_uid, owner, (gid_t)owner, fork_cfg->fork_max_bytes,
			 FORK_ENTRIES_MAX, st) == 0)
		return 0;
	if (errno == EMLINK)
		return err_set(why, why_len, "the working directory holds more than %d entries: "
			       "nothing was kept of the copy", FORK_ENTRIES_MAX);
	if (errno == EFBIG)
		return err_set(why, why_len, "the working directory holds more than "
			       "fork_max_bytes (%ld bytes) of files: nothing was kept of the copy",
			       fork_cfg->fork_max_bytes);
	return err_set(why, why_len, "copying %s failed (%s): nothing was kept of the copy", src,
		       strerror(errno));
}

int
fork_dir_copy(void *ctx, const char *src, char **dir, char name[PRIV_NAME_LEN + 1],
	      uid_t *uid, struct fs_copy_stats *st, char *why, size_t why_len)
{
	uid_t u = 0;
	int out;

	(void)ctx;
	if (fork_cfg == NULL || fork_cfg->fork_max_bytes == 0)
		return err_set(why, why_len, "fork_max_bytes is 0: forks are off");
	if (fork_cfg->kernel_uid_first && (u = uid_take()) == 0)
		return err_set(why, why_len, "every identity of kernel_uid_range is in use or "
			       "not swept yet");
	int in = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (in == -1) {
		err_set(why, why_len, "open %s: %s", src, strerror(errno));
		uid_release(u, NULL);
		return -1;
	}
	char *path = make_copy_dir(name, u, &out, why, why_len);
	int rc = path ? copy_into(in, out, u, src, st, why, why_len) : -1;
	close(in);
	if (out != -1)
		close(out);
	if (rc == -1) {
		if (path)
			fs_remove_tree(path);
		free(path);
		uid_release(u, NULL);
		return -1;
	}
	/* Reserved for the fork's next worker (uid_retake), as a kept directory's. */
	uid_release(u, path);
	log_info("session directory %s copied into %s for a fork: %lld bytes, %ld files, %ld "
		 "entries skipped, kernel uid %d", src, path, st->bytes, st->files, st->skipped,
		 (int)u);
	*dir = path;
	*uid = u;
	return 0;
}
