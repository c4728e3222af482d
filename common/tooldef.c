/* tooldef.c - see tooldef.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "pylit.h"
#include "shown.h"
#include "tooldef.h"
#include "xmalloc.h"
#include "ynode.h"

#define LETTERS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
#define IDCHARS LETTERS "0123456789"
/* Errors reported for one list at most; the rest are counted. */
#define MAX_ERRORS 20

/* Where a list is read from and what went wrong in it so far. */
struct reader {
	const char *file;
	struct buf errors;
	int n_errors;
	const struct tooldefs *before; /* for duplicate names */
	const struct tool_def *mine;   /* this list's, read so far */
	size_t n_mine;
};

static void report(struct reader *r, const struct ynode *at, const char *label, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

/* Note an error at `at`, labelled with the item it belongs to. */
static void
report(struct reader *r, const struct ynode *at, const char *label, const char *fmt, ...)
{
	va_list ap;

	if (r->n_errors++ >= MAX_ERRORS)
		return;
	buf_printf(&r->errors, "%s%s:%zu:%zu: %s: ", r->errors.len ? "\n" : "", r->file,
		   at->mark.line + 1, at->mark.column + 1, label);
	va_start(ap, fmt);
	char *text = NULL;
	if (vasprintf(&text, fmt, ap) == -1)
		text = NULL;
	va_end(ap);
	buf_adds(&r->errors, text ? text : "(out of memory)");
	free(text);
}

int
tooldef_identifier_ok(const char *s)
{
	size_t len = strlen(s);
	return len > 0 && len <= 128 && strchr(LETTERS, s[0]) != NULL &&
	       strspn(s, IDCHARS) == len;
}

int
tooldef_module_ok(const char *s)
{
	for (const char *p = s;;) {
		size_t len = strspn(p, IDCHARS);
		if (len == 0 || strchr(LETTERS, p[0]) == NULL)
			return 0;
		if (p[len] == '\0')
			return 1;
		if (p[len] != '.')
			return 0;
		p += len + 1;
	}
}

/*
 * The type grammar, a small part of Python's annotations:
 *   union := term ('|' term)*
 *   term  := NAME('.'NAME)* ['[' [union (',' union)*] ']'] | '...' | STRING | NUMBER
 * Spaces may stand between tokens. Returns the end of what it read, or NULL.
 */
static const char *type_union(const char *p, int depth);

static const char *
skip_space(const char *p)
{
	return p + strspn(p, " ");
}

static const char *
type_term(const char *p, int depth)
{
	p = skip_space(p);
	if (strncmp(p, "...", 3) == 0)
		return p + 3;
	if (*p == '\'' || *p == '"') { /* Literal['a', "b"] */
		const char *end = strchr(p + 1, *p);
		return end && !memchr(p + 1, '\\', (size_t)(end - p - 1)) ? end + 1 : NULL;
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		size_t n = strspn(p + 1, "0123456789.");
		return p + 1 + n;
	}
	if (*p == '\0' || strchr(LETTERS, *p) == NULL)
		return NULL;
	for (;;) {
		p += strspn(p, IDCHARS);
		if (*p != '.')
			break;
		if (strchr(LETTERS, *++p) == NULL)
			return NULL;
	}
	p = skip_space(p);
	if (*p != '[')
		return p;
	if (depth > 8)
		return NULL;
	p = skip_space(p + 1);
	if (*p == ']') /* tuple[()] aside, Callable[[], int] has an empty list */
		return p + 1;
	for (;;) {
		p = *skip_space(p) == '[' ? skip_space(p) : p;
		if (*p == '[') { /* Callable[[int, str], float] */
			p = skip_space(p + 1);
			while (*p != ']') {
				p = type_union(p, depth + 1);
				if (p == NULL)
					return NULL;
				p = skip_space(p);
				if (*p == ',')
					p++;
				else if (*p != ']')
					return NULL;
			}
			p++;
		} else {
			p = type_union(p, depth + 1);
		}
		if (p == NULL)
			return NULL;
		p = skip_space(p);
		if (*p == ']')
			return p + 1;
		if (*p != ',')
			return NULL;
		p++;
	}
}

static const char *
type_union(const char *p, int depth)
{
	for (;;) {
		p = type_term(p, depth);
		if (p == NULL)
			return NULL;
		p = skip_space(p);
		if (*p != '|')
			return p;
		p++;
	}
}

int
tooldef_type_ok(const char *s)
{
	if (strlen(s) > 200)
		return 0;
	const char *end = type_union(s, 0);
	return end != NULL && *skip_space(end) == '\0';
}

/* Whether a plain scalar reads as a number in YAML and in Python. */
static int
is_number(const char *s)
{
	char *end;
	if (s[0] == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
		return 0;
	(void)strtod(s, &end);
	return *end == '\0';
}

/* A default, as the Python literal it stands for, appended to b; -1: not one. */
static int
py_literal(struct buf *b, const struct ynode *v, int depth)
{
	if (depth > 4)
		return -1;
	if (v->type == YN_SEQ || v->type == YN_MAP) {
		buf_adds(b, v->type == YN_SEQ ? "[" : "{");
		for (size_t i = 0; i < v->n; i++) {
			buf_adds(b, i == 0 ? "" : v->type == YN_MAP && i % 2 ? ": " : ", ");
			if (py_literal(b, v->kids[i], depth + 1) < 0)
				return -1;
		}
		buf_adds(b, v->type == YN_SEQ ? "]" : "}");
		return 0;
	}
	if (strlen(v->text) != v->len)
		return -1;
	if (!v->plain) {
		pylit_str(b, v->text, v->len);
		return 0;
	}
	static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "on", NULL};
	static const char *const f[] = {"false", "False", "FALSE", "no", "No", "off", NULL};
	for (size_t i = 0; t[i]; i++)
		if (strcmp(v->text, t[i]) == 0) {
			buf_adds(b, "True");
			return 0;
		}
	for (size_t i = 0; f[i]; i++)
		if (strcmp(v->text, f[i]) == 0) {
			buf_adds(b, "False");
			return 0;
		}
	if (ynode_is_null_word(v->text))
		buf_adds(b, "None");
	else if (is_number(v->text))
		buf_adds(b, v->text);
	else
		pylit_str(b, v->text, v->len);
	return 0;
}

/*
 * The checks of the fields below, as config_check_fn: 0, or -1 with the
 * reason (after which the reader names the field).
 */
static int
check_tool_name(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (tooldef_identifier_ok(v))
		return 0;
	return err_set(why, why_len,
		       "%s is not a Python identifier (agents import it by this name)",
		       shown(v, sh));
}

static int
check_param_name(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (tooldef_identifier_ok(v))
		return 0;
	return err_set(why, why_len, "%s is not a Python identifier", shown(v, sh));
}

static int
check_module(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (tooldef_module_ok(v))
		return 0;
	return err_set(why, why_len,
		       "%s is not a Python module name (identifiers joined by dots)",
		       shown(v, sh));
}

static int
check_param_type(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (tooldef_type_ok(v))
		return 0;
	return err_set(why, why_len,
		       "%s is not a Python type expression (as str, float, list[str], "
		       "dict[str, float], numpy.ndarray, int | None)",
		       shown(v, sh));
}

static int
check_return_type(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (tooldef_type_ok(v))
		return 0;
	return err_set(why, why_len, "%s is not a Python type expression", shown(v, sh));
}

#define DFIELD(f) .offset = offsetof(struct tool_def, f), .size = sizeof(((struct tool_def *)0)->f)
#define PFIELD(f) \
	.offset = offsetof(struct tool_param, f), .size = sizeof(((struct tool_param *)0)->f)

/*
 * The fields of one parameter, one return_spec (stored in the definition
 * itself) and one definition, as the key table declares its keys: the
 * scalar ones are read by its grammar (config_read_field), the others
 * by read_param, read_params, read_return and read_examples. def NULL:
 * required.
 */
static const struct config_key param_fields[] = {
	{.name = "name", .kind = CFG_STRING, PFIELD(name), .check = check_param_name},
	{.name = "type", .kind = CFG_STRING, PFIELD(type), .check = check_param_type},
	{.name = "description", .kind = CFG_STRING, PFIELD(description)},
	{.name = "default", .kind = CFG_NODE, .def = "(required of optional parameters only)"},
	{.name = NULL},
};

static const struct config_key return_fields[] = {
	{.name = "type", .kind = CFG_STRING, DFIELD(return_type), .check = check_return_type},
	{.name = "description", .kind = CFG_STRING, .def = "", DFIELD(return_description)},
	{.name = NULL},
};

static const struct config_key def_fields[] = {
	{.name = "name", .kind = CFG_STRING, DFIELD(name), .check = check_tool_name},
	{.name = "description", .kind = CFG_STRING, DFIELD(description)},
	{.name = "module", .kind = CFG_STRING, DFIELD(module), .check = check_module},
	{.name = "category", .kind = CFG_STRING, .def = "", DFIELD(category)},
	{.name = "required_parameters", .kind = CFG_RECORDS, .def = "[]", .fields = param_fields},
	{.name = "optional_parameters", .kind = CFG_RECORDS, .def = "[]", .fields = param_fields},
	{.name = "return_spec", .kind = CFG_NODE, .fields = return_fields},
	{.name = "examples", .kind = CFG_LIST, .def = "[]"},
	{.name = NULL},
};

/* Whether `m` is a mapping of plain, distinct names; else reported, with what it must be. */
static int
mapping_ok(struct reader *r, const struct ynode *m, const char *label, const char *what)
{
	char why[256];
	int ok = 1;

	if (m->type != YN_MAP) {
		report(r, m, label, "expected %s", what);
		return 0;
	}
	for (size_t i = 0; i < m->n; i += 2)
		if (config_field_key_ok(m, i, why, sizeof(why)) < 0) {
			report(r, m->kids[i], label, "%s", why);
			ok = 0;
		}
	return ok;
}

/* The value of field `name` of mapping `m`, or NULL. */
static const struct ynode *
field(const struct ynode *m, const char *name)
{
	for (size_t i = 0; i + 1 < m->n; i += 2)
		if (m->kids[i]->type == YN_SCALAR && strcmp(m->kids[i]->text, name) == 0)
			return m->kids[i + 1];
	return NULL;
}

/*
 * Read the scalar fields of mapping `m` into the record at rec, all but
 * `done` (read before); report every unknown, bad and missing one.
 */
static void
read_fields(struct reader *r, const struct ynode *m, const char *label,
	    const struct config_key *fields, void *rec, const struct config_key *done)
{
	char why[256];

	for (size_t i = 0; i < m->n; i += 2) {
		const struct ynode *kn = m->kids[i], *v = m->kids[i + 1];
		const struct config_key *f = config_field_named(fields, kn->text);
		if (f == NULL) {
			config_unknown_field(fields, kn->text, why, sizeof(why));
			report(r, kn, label, "%s", why);
		} else if (f != done && config_field_is_scalar(f) &&
			   config_read_field(NULL, rec, f, v, why, sizeof(why)) < 0) {
			report(r, v, label, "%s", why);
		}
	}
	for (const struct config_key *f = fields; f->name != NULL; f++)
		if (f != done && f->def == NULL && config_field_is_scalar(f) &&
		    field(m, f->name) == NULL)
			report(r, m, label, "%s is required", f->name);
}

static void
param_free(struct tool_param *p)
{
	free(p->name);
	free(p->type);
	free(p->description);
	free(p->def);
}

static void
def_free(struct tool_def *d)
{
	free(d->name);
	free(d->description);
	free(d->module);
	free(d->category);
	for (size_t i = 0; i < d->n_params; i++)
		param_free(&d->params[i]);
	free(d->params);
	free(d->return_type);
	free(d->return_description);
	for (size_t i = 0; i < d->n_examples; i++)
		free(d->examples[i]);
	free(d->examples);
	free(d->file);
	memset(d, 0, sizeof(*d));
}

void
tooldefs_free(struct tooldefs *t)
{
	for (size_t i = 0; i < t->n; i++)
		def_free(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* Default `v` as the Python literal it stands for, or NULL after reporting. */
static char *
default_literal(struct reader *r, const struct ynode *v, const char *label)
{
	struct buf lit;

	buf_init(&lit);
	if (py_literal(&lit, v, 0) < 0) {
		buf_free(&lit);
		report(r, v, label, "default: not a value Python can take as a literal");
		return NULL;
	}
	buf_add(&lit, "", 1);
	return buf_release(&lit);
}

/* Read one parameter mapping into p; 0, or -1 after reporting. */
static int
read_param(struct reader *r, const struct ynode *m, const char *label, int optional,
	   struct tool_param *p)
{
	const struct ynode *dv = field(m, "default");
	int before = r->n_errors;

	memset(p, 0, sizeof(*p));
	if (!mapping_ok(r, m, label, "a mapping with name, type and description"))
		return -1;
	read_fields(r, m, label, param_fields, p, NULL);
	if (!optional && dv != NULL)
		report(r, dv, label,
		       "default: a required parameter has no default; list it under "
		       "optional_parameters");
	else if (optional && dv == NULL)
		report(r, m, label, "default is required for an optional parameter");
	else if (optional)
		p->def = default_literal(r, dv, label);
	if (r->n_errors == before)
		return 0;
	param_free(p);
	return -1;
}

/* Read required_parameters or optional_parameters of `m` into d. */
static void
read_params(struct reader *r, const struct ynode *m, const char *label, int optional,
	    struct tool_def *d)
{
	const char *key = optional ? "optional_parameters" : "required_parameters";
	const struct ynode *v = field(m, key);
	char plabel[192];

	if (v == NULL)
		return;
	if (v->type != YN_SEQ) {
		report(r, v, label, "%s: expected a list of parameters", key);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		struct tool_param p;
		snprintf(plabel, sizeof(plabel), "%s: %s item %zu", label, key, i + 1);
		if (read_param(r, v->kids[i], plabel, optional, &p) < 0)
			continue;
		size_t j = 0;
		while (j < d->n_params && strcmp(d->params[j].name, p.name) != 0)
			j++;
		if (j < d->n_params) {
			report(r, v->kids[i], plabel, "parameter %s is listed twice", p.name);
			param_free(&p);
			continue;
		}
		d->params = xreallocarray(d->params, d->n_params + 1, sizeof(*d->params));
		d->params[d->n_params++] = p;
		if (!optional)
			d->n_required++;
	}
}

static void
read_return(struct reader *r, const struct ynode *m, const char *label, struct tool_def *d)
{
	const struct ynode *v = field(m, "return_spec");
	char rlabel[192];

	if (v == NULL) {
		report(r, m, label, "return_spec is required (type, and a description)");
		return;
	}
	snprintf(rlabel, sizeof(rlabel), "%s: return_spec", label);
	if (mapping_ok(r, v, rlabel, "a mapping with type and description"))
		read_fields(r, v, rlabel, return_fields, d, NULL);
}

/* Add text node `v` (field `what`), read as every string is, to d's examples. */
static void
add_example(struct reader *r, const struct ynode *v, const char *label, const char *what,
	    struct tool_def *d)
{
	const struct config_key k = {.name = what, .kind = CFG_STRING, .size = sizeof(char *)};
	char why[256], *s = NULL;

	if (config_read_field(NULL, &s, &k, v, why, sizeof(why)) < 0) {
		report(r, v, label, "%s", why);
		return;
	}
	d->examples = xreallocarray(d->examples, d->n_examples + 1, sizeof(*d->examples));
	d->examples[d->n_examples++] = s;
}

static void
read_examples(struct reader *r, const struct ynode *m, const char *label, struct tool_def *d)
{
	const struct ynode *v = field(m, "examples");
	char elabel[192];

	if (v == NULL)
		return;
	if (v->type == YN_SCALAR && !(v->plain && ynode_is_null_word(v->text))) {
		add_example(r, v, label, "examples", d); /* one snippet written without a list */
		return;
	}
	if (v->type != YN_SEQ) {
		report(r, v, label, "examples: expected a list of code snippets");
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		snprintf(elabel, sizeof(elabel), "%s: examples item %zu", label, i + 1);
		add_example(r, v->kids[i], elabel, "snippet", d);
	}
}

/* The definition named `name` read before, or NULL. */
static const struct tool_def *
defined_before(const struct reader *r, const char *name)
{
	for (size_t i = 0; i < r->before->n; i++)
		if (strcmp(r->before->v[i].name, name) == 0)
			return &r->before->v[i];
	for (size_t i = 0; i < r->n_mine; i++)
		if (strcmp(r->mine[i].name, name) == 0)
			return &r->mine[i];
	return NULL;
}

/* Read the name of definition `m` first: every later message names the tool by it. */
static void
read_name(struct reader *r, const struct ynode *m, char *label, size_t label_len, size_t index,
	  struct tool_def *d)
{
	const struct ynode *nv = field(m, "name");
	char why[256];

	if (nv == NULL) {
		report(r, m, label, "name is required");
		return;
	}
	if (config_read_field(NULL, d, &def_fields[0], nv, why, sizeof(why)) < 0) {
		report(r, nv, label, "%s", why);
		return;
	}
	snprintf(label, label_len, "tools item %zu (%.64s)", index + 1, d->name);
	const struct tool_def *o = defined_before(r, d->name);
	if (o)
		report(r, nv, label, "duplicate tool name %s (first at %s:%zu)", d->name, o->file,
		       o->line);
}

/* Read one definition; 0 and d filled, or -1 after reporting. */
static int
read_def(struct reader *r, const struct ynode *m, size_t index, struct tool_def *d)
{
	char label[128];
	int before = r->n_errors;

	memset(d, 0, sizeof(*d));
	snprintf(label, sizeof(label), "tools item %zu", index + 1);
	if (!mapping_ok(r, m, label, "a mapping (a tool definition)"))
		return -1;
	config_field_defaults(NULL, d, def_fields, "tools");
	config_field_defaults(NULL, d, return_fields, "tools.return_spec");
	read_name(r, m, label, sizeof(label), index, d);
	read_fields(r, m, label, def_fields, d, &def_fields[0]);
	read_params(r, m, label, 0, d);
	read_params(r, m, label, 1, d);
	read_return(r, m, label, d);
	read_examples(r, m, label, d);
	if (r->n_errors != before) {
		def_free(d);
		return -1;
	}
	d->file = xstrdup(r->file);
	d->line = m->mark.line + 1;
	return 0;
}

/* Copy the reader's errors into why; returns -1. */
static int
errors_out(struct reader *r, char *why, size_t why_len)
{
	if (r->n_errors > MAX_ERRORS)
		buf_printf(&r->errors, "\n%s: %d more errors not shown", r->file,
			   r->n_errors - MAX_ERRORS);
	buf_add(&r->errors, "", 1);
	err_set(why, why_len, "%s", r->errors.data);
	buf_free(&r->errors);
	return -1;
}

int
tooldefs_read_node(struct tooldefs *t, const char *file, const struct ynode *list, char *why,
		   size_t why_len)
{
	struct reader r = {.file = file, .before = t};
	struct tool_def *mine = NULL;

	buf_init(&r.errors);
	if (list->type == YN_SCALAR && list->plain && ynode_is_null_word(list->text)) {
		buf_free(&r.errors);
		return 0; /* `tools:` with nothing under it */
	}
	if (list->type != YN_SEQ) {
		report(&r, list, "tools", "expected a list of tool definitions");
		return errors_out(&r, why, why_len);
	}
	mine = xcalloc(list->n + 1, sizeof(*mine));
	r.mine = mine;
	for (size_t i = 0; i < list->n; i++)
		if (read_def(&r, list->kids[i], i, &mine[r.n_mine]) == 0)
			r.n_mine++;
	if (r.n_errors > 0) {
		struct tooldefs drop = {mine, r.n_mine};
		tooldefs_free(&drop);
		return errors_out(&r, why, why_len);
	}
	buf_free(&r.errors);
	t->v = xreallocarray(t->v, t->n + r.n_mine + 1, sizeof(*t->v));
	memcpy(t->v + t->n, mine, r.n_mine * sizeof(*mine));
	t->n += r.n_mine;
	free(mine);
	return 0;
}

static int
yaml_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0;
}

/* The list of one tools_dir file: the root, or the root's `tools`. */
static const struct ynode *
file_list(const struct ynode *root)
{
	if (root->type == YN_MAP && root->n == 2 && root->kids[0]->type == YN_SCALAR &&
	    strcmp(root->kids[0]->text, "tools") == 0)
		return root->kids[1];
	return root;
}

int
tooldefs_load_dir(struct tooldefs *t, const char *dir, char *why, size_t why_len)
{
	struct dirent **names = NULL;
	struct buf errors;
	char one[ERR_LEN];
	int n, rc = 0;

	if (dir == NULL || dir[0] == '\0')
		return 0;
	n = scandir(dir, &names, yaml_name, alphasort);
	if (n < 0)
		return err_set(why, why_len, "tools_dir %s: %s", dir, strerror(errno));
	buf_init(&errors);
	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]->d_name);
		struct ynode *root = NULL;
		if (ynode_load_file(path, &root, one, sizeof(one)) < 0 ||
		    tooldefs_read_node(t, path, file_list(root), one, sizeof(one)) < 0) {
			buf_printf(&errors, "%s%s", errors.len ? "\n" : "", one);
			rc = -1;
		}
		ynode_free(root);
		free(path);
		free(names[i]);
	}
	free(names);
	if (rc < 0) {
		buf_add(&errors, "", 1);
		err_set(why, why_len, "%s", errors.data);
	}
	buf_free(&errors);
	return rc;
}

char *
tooldef_signature(const struct tool_def *d)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "%s(", d->name);
	for (size_t i = 0; i < d->n_params; i++) {
		const struct tool_param *p = &d->params[i];
		buf_printf(&b, "%s%s: %s", i ? ", " : "", p->name, p->type);
		if (p->def)
			buf_printf(&b, " = %s", p->def);
	}
	buf_printf(&b, ") -> %s", d->return_type);
	return buf_release(&b);
}
