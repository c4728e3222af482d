/*
 * secret_file.h - files that hold a credential (auth.tokens_file, a
 * publisher's sas_token_file and account_key_file,
 * azure_ai_search.api_key_file), opened by the privileged parent and read
 * by the front from a copy (codeexecd.yaml(5), SECURITY in codeexecd(8)).
 *
 * The parent opens each one as root, before the fork, and refuses a file
 * that is not regular, that its group or others may read or write, or
 * that a kernel's uid owns: what an operator does first with a secret
 * (root:root, 0600) must work, and a kernel must never be able to read it.
 * It keeps the descriptor, and copies the contents into a sealed memfd
 * that it passes to every front it starts (PRIV_SECRET, priv_msg.h) and
 * again on SIGHUP, read afresh: from the path if the parent, no longer
 * root, may still open it, else from the kept descriptor (a file edited
 * in place is seen; one renamed over it is not, and is logged). The front holds
 * only those copies, looked up by the path its configuration names: a
 * path the parent did not open at start-up is an error that says a
 * restart is needed.
 *
 * One table per process; its functions take a lock of their own, so the
 * front's HTTP threads may read while its main loop replaces a copy.
 */
#ifndef COMMON_SECRET_FILE_H
#define COMMON_SECRET_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* The largest secret file taken, in bytes. */
#define SECRET_FILE_MAX (1024 * 1024)

/*
 * Who must not own a secret file: the kernels' uids, first..last, named
 * `account` in messages (NULL: "a kernel_uid_range identity"). first >
 * last: nobody (the daemon not started as root shares its uid with its
 * kernels, and cannot help it).
 */
struct secret_deny {
	uid_t first, last;
	const char *account;
};

/*
 * The parent: open `path` for configuration key `key` (both borrowed,
 * copied), check it against `deny`, and keep it with a copy of its
 * contents. A path opened before is not opened twice. 0, or -1 with
 * why[why_len] naming the key, the file and the fix.
 */
int secret_file_open(const char *key, const char *path, const struct secret_deny *deny,
		     char *why, size_t why_len);
/*
 * The same for a file only the parent uses (egress.inject's, handed to
 * the egress proxy alone): never sent to a front, unless a front's key
 * names the same path too.
 */
int secret_file_open_parent(const char *key, const char *path, const struct secret_deny *deny,
			    char *why, size_t why_len);
/* Whether copy i is only the parent's (secret_file_open_parent). */
int secret_file_parent_only(size_t i);
/*
 * The parent, on SIGHUP: copy every file again, opened anew when it may
 * be, else from the kept descriptor, with the same checks. A file that
 * fails keeps its earlier copy (logged, as is a path that now names
 * another file the parent cannot open).
 */
void secret_file_reread(void);
/* How many copies the table holds, and the path and memfd of copy i (borrowed). */
size_t secret_file_count(void);
const char *secret_file_path(size_t i);
int secret_file_fd(size_t i);

/* The front: `fd` (owned from now on) is the parent's copy of `path`; replaces an older one. */
void secret_file_put(const char *path, int fd);
/* The front, after it closed what it inherited: forget the table without closing. */
void secret_file_forget(void);
/*
 * The contents of the copy of `path`, NUL-terminated (caller frees and
 * should wipe), its length in *len unless NULL; or NULL with why[why_len]
 * naming `key`: no copy (a file named only by a reload, or not opened).
 */
char *secret_file_read(const char *key, const char *path, size_t *len, char *why,
		       size_t why_len);

/*
 * The first line of the copy of `path`, trimmed of blanks, into a string
 * (caller frees and should wipe); NULL with why naming `key` when there
 * is no copy or the line is empty.
 */
char *secret_file_line(const char *key, const char *path, char *why, size_t why_len);

#endif
