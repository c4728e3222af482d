/*
 * ynode.c - the YAML loader: libyaml's events into the tree of ynode.h.
 *
 * What it accepts, in short (codeexecd.yaml(5) says it at length): one
 * YAML document; plain, quoted and block scalars; no anchors, aliases or
 * explicit tags; bounded depth and size. Every error is reported as
 * "FILE:LINE:COLUMN: message", 1-based.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "buf.h"
#include "log.h"
#include "shown.h"
#include "xmalloc.h"
#include "ynode.h"

#define CONFIG_MAX_BYTES (4 * 1024 * 1024) /* a larger file is refused */
#define CONFIG_MAX_DEPTH 16		   /* so is deeper nesting */

/* Reading state: the file's bytes, libyaml's parser, where the error goes. */
struct loader {
	struct yerr err;
	const char *input;	/* the file's bytes, for reader-error positions */
	size_t inputlen;
	yaml_parser_t parser;
};

void
ynode_free(struct ynode *nd)
{
	if (nd == NULL)
		return;
	for (size_t i = 0; i < nd->n; i++)
		ynode_free(nd->kids[i]);
	free(nd->kids);
	free(nd->text);
	free(nd);
}

int
ynode_is_null_word(const char *s)
{
	return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	       strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* What a message says it got instead: "a list", "no value", or the text. */
const char *
ynode_what(const struct ynode *nd, char *out)
{
	if (nd->type == YN_SEQ)
		return "a list";
	if (nd->type == YN_MAP)
		return "a mapping";
	if (nd->plain && ynode_is_null_word(nd->text))
		return "no value";
	return shown(nd->text, out);
}

int ynode_fail(const struct yerr *e, yaml_mark_t m, const char *fmt, ...)
{
	int off = snprintf(e->why, e->why_len, "%s:%zu:%zu: ", e->file, m.line + 1, m.column + 1);
	va_list ap;

	va_start(ap, fmt);
	if (off >= 0 && (size_t)off < e->why_len)
		vsnprintf(e->why + off, e->why_len - (size_t)off, fmt, ap);
	va_end(ap);
	return -1;
}

static int
syntax_error(struct loader *l)
{
	yaml_parser_t *p = &l->parser;
	yaml_mark_t m = p->problem_mark;

	if (p->error == YAML_MEMORY_ERROR)
		fatalx("config: libyaml is out of memory");
	if (p->error == YAML_READER_ERROR) {
		/* The reader reports a byte offset only. */
		memset(&m, 0, sizeof(m));
		for (size_t i = 0; i < p->problem_offset && i < l->inputlen; i++) {
			if (l->input[i] == '\n') {
				m.line++;
				m.column = 0;
			} else {
				m.column++;
			}
		}
	}
	if (p->context != NULL)
		return ynode_fail(&l->err, m, "YAML syntax error: %s (%s at line %zu)",
				  p->problem ? p->problem : "bad input", p->context,
				  p->context_mark.line + 1);
	return ynode_fail(&l->err, m, "YAML syntax error: %s",
			  p->problem ? p->problem : "bad input");
}

static int
next_event(struct loader *l, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&l->parser, ev))
		return syntax_error(l);
	return 0;
}

/* Build the node that `ev` starts; consumes `ev` in every case. */
static int
build(struct loader *l, yaml_event_t *ev, int depth, struct ynode **out)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;
	yaml_event_type_t end;
	struct ynode *nd;
	int rc = -1;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		ynode_fail(&l->err, ev->start_mark,
			   "aliases (*%s) are not supported: write the value out",
			   (const char *)ev->data.alias.anchor);
		goto done;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		ynode_fail(&l->err, ev->start_mark, "unexpected YAML structure");
		goto done;
	}
	if (anchor != NULL) {
		ynode_fail(&l->err, ev->start_mark,
			   "anchors (&%s) are not supported: write the value out",
			   (const char *)anchor);
		goto done;
	}
	if (tag != NULL) {
		char sh[SHOWN_LEN];
		ynode_fail(&l->err, ev->start_mark,
			   "YAML tags (%s) are not supported; quote the value instead",
			   shown((const char *)tag, sh));
		goto done;
	}
	if (depth > CONFIG_MAX_DEPTH) {
		ynode_fail(&l->err, ev->start_mark, "nested more than %d levels deep",
			   CONFIG_MAX_DEPTH);
		goto done;
	}

	nd = xcalloc(1, sizeof(*nd));
	nd->mark = ev->start_mark;
	if (ev->type == YAML_SCALAR_EVENT) {
		nd->type = YN_SCALAR;
		nd->len = ev->data.scalar.length;
		nd->text = xmalloc(nd->len + 1);
		memcpy(nd->text, ev->data.scalar.value, nd->len);
		nd->text[nd->len] = '\0';
		nd->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		*out = nd;
		rc = 0;
		goto done;
	}
	nd->type = ev->type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP;
	end = ev->type == YAML_SEQUENCE_START_EVENT ? YAML_SEQUENCE_END_EVENT
						    : YAML_MAPPING_END_EVENT;
	yaml_event_delete(ev);
	for (;;) {
		yaml_event_t kev;
		struct ynode *kid;
		if (next_event(l, &kev) < 0)
			break;
		if (kev.type == end) {
			yaml_event_delete(&kev);
			*out = nd;
			return 0;
		}
		if (build(l, &kev, depth + 1, &kid) < 0)
			break;
		nd->kids = xreallocarray(nd->kids, nd->n + 1, sizeof(*nd->kids));
		nd->kids[nd->n++] = kid;
	}
	ynode_free(nd);
	return -1;
done:
	yaml_event_delete(ev);
	return rc;
}

/* Read the one document of the stream into a tree. */
static int
load_tree(struct loader *l, struct ynode **root)
{
	yaml_event_t ev;

	*root = NULL;
	if (next_event(l, &ev) < 0)
		return -1;
	yaml_event_delete(&ev); /* stream start */
	if (next_event(l, &ev) < 0)
		return -1;
	if (ev.type == YAML_STREAM_END_EVENT) {
		ynode_fail(&l->err, ev.start_mark,
			   "the file is empty: expected a mapping of keys");
		yaml_event_delete(&ev);
		return -1;
	}
	yaml_event_delete(&ev); /* document start */
	if (next_event(l, &ev) < 0 || build(l, &ev, 0, root) < 0)
		return -1;
	if (next_event(l, &ev) < 0)
		return -1;
	yaml_event_delete(&ev); /* document end */
	if (next_event(l, &ev) < 0)
		return -1;
	if (ev.type != YAML_STREAM_END_EVENT) {
		ynode_fail(&l->err, ev.start_mark,
			   "a second YAML document: the file must hold only one");
		yaml_event_delete(&ev);
		return -1;
	}
	yaml_event_delete(&ev);
	return 0;
}

/* Read all of `path`, a regular file of at most CONFIG_MAX_BYTES. */
static int
read_file(const char *path, char **out, size_t *outlen, char *why, size_t why_len)
{
	struct buf b;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	buf_init(&b);
	for (;;) {
		buf_reserve(&b, 65536);
		ssize_t r = read(fd, b.data + b.len, 65536);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, why_len, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		b.len += (size_t)r;
		if (b.len > CONFIG_MAX_BYTES) {
			snprintf(why, why_len, "%s: larger than %d bytes", path, CONFIG_MAX_BYTES);
			goto fail;
		}
	}
	close(fd);
	b.data[b.len] = '\0';
	*outlen = b.len;
	*out = buf_release(&b);
	return 0;
fail:
	close(fd);
	buf_free(&b);
	return -1;
}

int
ynode_load_file(const char *path, struct ynode **root, char *why, size_t why_len)
{
	struct loader *l;
	char *input = NULL;
	size_t len = 0;
	int rc = -1;

	*root = NULL;
	if (read_file(path, &input, &len, why, why_len) < 0)
		return -1;
	l = xcalloc(1, sizeof(*l));
	l->err.file = path;
	l->input = input;
	l->inputlen = len;
	l->err.why = why;
	l->err.why_len = why_len;
	if (!yaml_parser_initialize(&l->parser))
		fatalx("config: cannot initialize libyaml");
	yaml_parser_set_input_string(&l->parser, (const unsigned char *)input, len);
	rc = load_tree(l, root);
	yaml_parser_delete(&l->parser);
	free(l);
	free(input);
	if (rc < 0) {
		ynode_free(*root);
		*root = NULL;
	}
	return rc;
}
