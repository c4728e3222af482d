/*
 * spill.h - files under codeexecd-output/ in the kernel's working directory.
 *
 * Owns the creation of the files that hold what an execution's result
 * cannot: a whole stdout or stderr past output_limit, a rich output past
 * rich_limit. The worker may run as root while the directory belongs to
 * the kernel's identity (hostile code), so every step goes through a
 * descriptor, never follows a symbolic link, and never reuses a name.
 */
#ifndef WORKER_SPILL_H
#define WORKER_SPILL_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"

#define SPILL_DIR "codeexecd-output"

/* A directory below the kernel's working directory that spill files go to. */
struct spill_dir {
	const char *path; /* relative to cwd, "/"-separated; each part made as needed */
	int mode;	  /* of the parts this makes */
};
/* SPILL_DIR, 0700: what a result could not hold. */
extern const struct spill_dir spill_output_dir;

/* Where spill files go and whose they become; borrowed by each execution. */
struct spill_place {
	const char *cwd;  /* the kernel's working directory */
	int chown;	  /* give files to uid/gid (the kernel's identity) */
	uid_t uid;
	gid_t gid;
	off_t max_bytes;  /* 0: unlimited; else a file stops growing there */
};

/*
 * Create a new file dir/<request>-<random>-<what><ext> under
 * place->cwd. Returns its descriptor (close-on-exec, write only) and its
 * path relative to cwd in *rel (caller frees), or -1 with why[why_len]
 * set.
 */
int spill_create(const struct spill_place *place, const struct spill_dir *dir, unsigned request,
		 const char *what, const char *ext, char **rel, char *why, size_t why_len);
/*
 * Write len bytes at the end of spill file fd that has *written bytes,
 * honouring place->max_bytes. Returns 0, 1 if the size limit cut it (what
 * fits was written), or -1 with errno set.
 */
int spill_write(const struct spill_place *place, int fd, off_t *written, const void *data,
		size_t len);
/*
 * Save data[len] into a new spill file of dir in one go. Returns 0 with *rel set
 * (caller frees), or -1 with why[why_len] set.
 */
int spill_save(const struct spill_place *place, const struct spill_dir *dir, unsigned request,
	       const char *what, const char *ext, const void *data, size_t len, char **rel,
	       char *why, size_t why_len);

#endif
