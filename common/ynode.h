/*
 * ynode.h - the YAML tree ynode.c builds from libyaml's events, which
 * config.c walks, as do the readers of values too rich for the key table
 * (tooldef.c, sidecar_config.c).
 *
 * Every node keeps libyaml's mark of where it starts, so each reader can
 * name FILE:LINE:COLUMN in its messages. The loader's rules hold for every
 * tree: one document, no anchors, aliases or tags, bounded depth and size.
 */
#ifndef COMMON_YNODE_H
#define COMMON_YNODE_H

#include <stdarg.h>
#include <stddef.h>
#include <yaml.h>

enum ynode_type {
	YN_SCALAR,
	YN_SEQ,
	YN_MAP,
};

struct ynode {
	enum ynode_type type;
	yaml_mark_t mark;     /* where the node starts */
	char *text;	      /* YN_SCALAR: the value, NUL-terminated */
	size_t len;	      /* its length in bytes, which may hide a NUL */
	int plain;	      /* YN_SCALAR written without quotes or | > */
	struct ynode **kids;  /* YN_SEQ: items; YN_MAP: key, value, key, value... */
	size_t n;
};

/* Where a reader's error goes: the file it reads, and the caller's buffer. */
struct yerr {
	const char *file;
	char *why;
	size_t why_len;
};

/*
 * Write "FILE:LINE:COLUMN: " and the formatted message at mark `m` into
 * e->why (1-based, as every reader of the tree reports). Returns -1.
 */
int ynode_fail(const struct yerr *e, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Free `nd` and everything below it. NULL is harmless. */
void ynode_free(struct ynode *nd);
/*
 * Read the one YAML document of `path` into *root (caller owns). Returns 0,
 * or -1 with "FILE:LINE:COLUMN: what is wrong" in why.
 */
int ynode_load_file(const char *path, struct ynode **root, char *why, size_t why_len);
/* Whether a plain scalar's text is YAML's null ("", ~, null). */
int ynode_is_null_word(const char *s);
/*
 * What a message says it got instead of a value: "a list", "no value", or
 * the text as shown() writes it into `out`, of SHOWN_LEN bytes (shown.h).
 */
const char *ynode_what(const struct ynode *nd, char *out);

#endif
