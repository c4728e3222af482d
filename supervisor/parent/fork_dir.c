/* fork_dir.c - see fork_dir.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "fork_dir.h"
#include "log.h"
#include "rand.h"
#include "remover.h"
#include "uid.h"
#include "wstatus.h"
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
	if (*fd == -1)
		err_set(why, why_len, "open %s: %s", path, strerror(errno));
	else if (uid != 0 && fchown(*fd, uid, uid) == -1)
		err_set(why, why_len, "chown %s to kernel identity %d: %s", path, (int)uid,
			strerror(errno));
	else
		return path;
	if (*fd != -1)
		close(*fd);
	*fd = -1;
	rmdir(path);
	free(path);
	return NULL;
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

/* What the copying child tells the parent, in its result file. */
struct copy_result {
	int rc;
	struct fs_copy_stats st;
	char why[PRIV_REASON_MAX - 40];
};

/* In the child: copy, write how it went to `res`, and end. */
static void __attribute__((noreturn))
copy_child(int in, int out, uid_t uid, const char *src, int res)
{
	struct copy_result r = {0};

	setpgid(0, 0);
	r.rc = copy_into(in, out, uid, src, &r.st, r.why, sizeof(r.why));
	_exit(write(res, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

/* Undo a copy that is not kept: removed off the loop, its uid reserved
 * until the files are gone. */
static void
discard(struct monitor_fork *job)
{
	uid_release(job->uid, job->dir);
	remover_add(job->dir);
	job->dir = NULL;
}

int
fork_dir_start(void *ctx, const char *src, struct monitor_fork *job, char *why, size_t why_len)
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
	int res = memfd_create("fork-copy", MFD_CLOEXEC);
	char *path = in == -1 || res == -1 ? NULL : make_copy_dir(job->name, u, &out, why, why_len);
	if (path == NULL) {
		if (in == -1 || res == -1)
			err_set(why, why_len, "open %s or a result file: %s", src, strerror(errno));
		if (in != -1)
			close(in);
		if (res != -1)
			close(res);
		uid_release(u, NULL);
		return -1;
	}
	job->dir = path;
	job->uid = u;
	job->result_fd = res;
	/* glibc's fork leaves malloc usable in the child of our two threads
	 * (the remover's): the copy allocates, and logs nothing. */
	job->pid = fork();
	if (job->pid == 0)
		copy_child(in, out, u, src, res);
	int err = errno;
	close(in);
	close(out);
	if (job->pid == -1) {
		close(res);
		discard(job);
		return err_set(why, why_len, "fork for the copy of %s: %s", src, strerror(err));
	}
	setpgid(job->pid, job->pid); /* as the child does: a kill may come first */
	return 0;
}

int
fork_dir_done(void *ctx, struct monitor_fork *job, int status, struct fs_copy_stats *st,
	      char *why, size_t why_len)
{
	struct copy_result r;
	ssize_t n = pread(job->result_fd, &r, sizeof(r), 0);

	(void)ctx;
	close(job->result_fd);
	job->result_fd = -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != (ssize_t)sizeof(r)) {
		char *how = wstatus_text(status);
		discard(job);
		err_set(why, why_len, "the copy into sessions/%s did not finish (its process %s)",
			job->name, how);
		free(how);
		return -1;
	}
	if (r.rc == -1) {
		discard(job);
		r.why[sizeof(r.why) - 1] = '\0';
		return err_set(why, why_len, "%s", r.why);
	}
	/* Reserved for the fork's next worker (uid_retake), as a kept directory's. */
	uid_release(job->uid, job->dir);
	*st = r.st;
	log_info("session directory copied into %s for a fork: %lld bytes, %ld files, %ld "
		 "entries skipped, kernel uid %d", job->dir, st->bytes, st->files, st->skipped,
		 (int)job->uid);
	return 0;
}
