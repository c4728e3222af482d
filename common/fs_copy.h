/*
 * fs_copy.h - copying a directory tree that someone else owns and may be
 * changing: a kernel's working directory, copied by the privileged parent
 * into a forked session's (doc/README.privsep, PRIV_FORK_DIR).
 *
 * Every step opens relative to its parent with O_NOFOLLOW, so a link
 * planted in the tree is never followed; what is neither a regular file
 * nor a directory (a symlink, a device, a FIFO, a socket) is skipped and
 * counted, never opened (each entry is looked at through an O_PATH
 * descriptor first, and only a regular file is then opened for reading:
 * a FIFO cannot make the copy wait, a device put in a file's place is
 * never opened).
 * A hard link is copied as content, once per name. Only entries of the
 * tree's owner are copied: a hard link the owner made to another's file
 * (which the privileged copier could read, and the owner not) is skipped.
 * The copy's files and directories are made fresh (O_EXCL, mkdirat),
 * given to the new owner through their own descriptors (fchown), with
 * mode 0700 for directories and 0600 for files (0700 if the source had
 * an execute bit): never a chown or chmod by path. The byte cap is counted as the bytes are read,
 * so a file that grows during the copy cannot carry it past the cap.
 */
#ifndef COMMON_FS_COPY_H
#define COMMON_FS_COPY_H

#include <sys/types.h>

/* Directories deeper than this below the top are skipped (and counted). */
#define FS_COPY_DEPTH_MAX 64

struct fs_copy_stats {
	long long bytes; /* of regular files' contents */
	long files;	 /* regular files copied */
	long dirs;	 /* directories made, the top one not counted */
	long skipped;	 /* entries left out: links, devices, FIFOs, sockets,
			  * what could not be read, directories too deep */
};

/*
 * Copy what the directory `src` holds into the empty directory `dst`
 * (descriptors, borrowed), only its entries of uid `owner` ((uid_t)-1:
 * any), the new entries owned by uid:gid ((uid_t)-1: left to the
 * caller's own), at most `max_bytes` of contents and `max_entries`
 * entries (each one met counts, copied or skipped: a tree of millions of
 * empty files must not hold the copier for long). 0, or -1 with errno:
 * EFBIG when the contents pass max_bytes, EMLINK when the entries pass
 * max_entries, else of the first failure to write the copy (a source
 * entry that cannot be read is skipped, not an error). On failure what was copied stays: the caller
 * removes `dst` (fs_tree.h).
 */
int fs_copy_tree(int src, int dst, uid_t owner, uid_t uid, gid_t gid, long long max_bytes,
		 long max_entries, struct fs_copy_stats *st);

#endif
