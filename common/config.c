/*
 * config.c - the configuration file: the YAML tree (ynode.c) walked into
 * struct config by the key table (config_keys.c), with the scalar grammar
 * every key's value is read by, and key lookup with suggestions.
 *
 * The key table is the only list of keys: config_defaults() applies
 * its defaults, the loader accepts exactly its names and nothing else, and
 * tests/unit/test_config checks that codeexecd.yaml(5) and the sample
 * etc/codeexecd.yaml name the same keys.
 *
 * What the walker accepts, in short (the man page says it at length):
 * a top level that is a mapping, of the table's keys, none duplicated.
 * Every error is reported as "FILE:LINE:COLUMN: message", 1-based.
 */
#include "autoconf.h"

#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "auth_config.h"
#include "buf.h"
#include "config.h"
#include "config_int.h"
#include "err.h"
#include "kernelspec.h"
#include "log.h"
#include "shown.h"
#include "tooldef.h"
#include "xmalloc.h"
#include "ynode.h"

_Static_assert(sizeof(enum env_type) == sizeof(int), "CFG_ENUM fields are stored as int");

int
config_identity_share(const struct config *c)
{
	if (c->pool_max_sessions_per_identity > 0)
		return c->pool_max_sessions_per_identity;
	if (c->auth_mode == AUTH_NONE)
		return c->pool_max_sessions;
	return c->pool_max_sessions >= 4 ? c->pool_max_sessions / 4 : 1;
}

const char *
config_env_type_name(enum env_type t)
{
	return t == ENV_PIP ? "pip" : t == ENV_UV ? "uv" : "conda";
}

/* Index of the key called `name`, or -1. */
static int
key_index(const char *name)
{
	for (size_t i = 0; i < config_key_count; i++)
		if (strcmp(config_key_table[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The key a misspelt `name` most likely meant, or NULL. */
static const char *
suggest(const char *name)
{
	const char *best = NULL;
	size_t bestd = SHOWN_NEAR + 1;

	for (size_t i = 0; i < config_key_count; i++) {
		size_t d = shown_distance(name, config_key_table[i].name);
		if (d < bestd && strlen(config_key_table[i].name) > 3) {
			best = config_key_table[i].name;
			bestd = d;
		}
	}
	return best;
}

/* Whether `name` is a section, the first part of some dotted key. */
static int
is_section(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < config_key_count; i++)
		if (strncmp(config_key_table[i].name, name, len) == 0 &&
		    config_key_table[i].name[len] == '.')
			return 1;
	return 0;
}

static void *
field_of(struct config *c, const struct config_key *k)
{
	return (char *)c + k->offset;
}

/* A YAML 1.1 boolean word: 1 true, 0 false, -1 not a boolean. */
static int
bool_word(const char *s)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
					  "on",	  "On",	  "ON",	  NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO",
					 "off",	  "Off",   "OFF",   NULL};

	for (size_t i = 0; yes[i] != NULL; i++)
		if (strcmp(s, yes[i]) == 0)
			return 1;
	for (size_t i = 0; no[i] != NULL; i++)
		if (strcmp(s, no[i]) == 0)
			return 0;
	return -1;
}

/* A decimal integer, no leading zeros (YAML 1.1 reads 010 as octal). */
static int
parse_long(const char *s, long *out)
{
	const char *d = s + (s[0] == '-' || s[0] == '+');
	size_t len = strlen(d);
	char *end;

	if (len == 0 || strspn(d, "0123456789") != len || (d[0] == '0' && len > 1))
		return -1;
	errno = 0;
	*out = strtol(s, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

/* A finite decimal number: digits, sign, point and exponent only. */
static int
parse_double(const char *s, double *out)
{
	size_t len = strlen(s);
	char *end;

	if (len == 0 || strspn(s, "0123456789+-.eE") != len)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return errno != 0 || end == s || *end != '\0' || !isfinite(*out) ? -1 : 0;
}

/* Whether a text value is acceptable where a string is expected. */
static int
string_ok(const char *s, int plain, char *why, size_t why_len)
{
	if (plain && ynode_is_null_word(s))
		return err_set(why, why_len, "has no value");
	if (plain && bool_word(s) >= 0)
		return err_set(why, why_len,
			       "expected a string, got the YAML boolean %s; "
			       "quote it if you mean the text",
			       s);
	return 0;
}

static void
strlist_add(struct strlist *l, const char *s)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

static void
strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void
strmap_add(struct strmap *m, const char *key, const char *value)
{
	m->keys = xreallocarray(m->keys, m->n + 1, sizeof(*m->keys));
	m->values = xreallocarray(m->values, m->n + 1, sizeof(*m->values));
	m->keys[m->n] = xstrdup(key);
	m->values[m->n] = xstrdup(value);
	m->n++;
}

static void
strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->keys[i]);
		free(m->values[i]);
	}
	free(m->keys);
	free(m->values);
	m->keys = m->values = NULL;
	m->n = 0;
}

/* Free every string field of every record, then the array. */
static void
records_free(struct config_records *r, const struct config_key *k)
{
	for (size_t i = 0; i < r->n; i++)
		for (const struct config_key *f = k->fields; f->name != NULL; f++)
			if (f->kind == CFG_STRING)
				free(*(char **)((char *)r->v + i * k->record_size + f->offset));
			else if (f->kind == CFG_LIST)
				strlist_free((void *)((char *)r->v + i * k->record_size + f->offset));
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

/* The default texts of the table go through here too. */
int
config_set_scalar(struct config *c, void *base, const struct config_key *k, const char *s,
		  int plain, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	void *f = (char *)base + k->offset;
	long lv;
	double dv;
	int iv;

	switch (k->kind) {
	case CFG_STRING:
		if (string_ok(s, plain, why, why_len) < 0)
			return -1;
		if (k->check != NULL && k->check(c, s, why, why_len) < 0)
			return -1;
		if (k->size != 0) {
			char **p = f;
			free(*p);
			*p = xstrdup(s);
		}
		return 0;
	case CFG_BOOL:
		if (!plain || (iv = bool_word(s)) < 0)
			return err_set(why, why_len, "expected true or false, got %s",
				       shown(s, sh));
		memcpy(f, &iv, sizeof(iv));
		return 0;
	case CFG_INT:
		if (!plain || parse_long(s, &lv) < 0)
			return err_set(why, why_len, "expected an integer, got %s", shown(s, sh));
		if (lv < k->min || lv > k->max)
			return err_set(why, why_len, "must be between %.0f and %.0f, got %ld",
				       k->min, k->max, lv);
		if (k->size == sizeof(int)) {
			iv = (int)lv;
			memcpy(f, &iv, sizeof(iv));
		} else {
			memcpy(f, &lv, sizeof(lv));
		}
		return 0;
	case CFG_NUMBER:
		if (!plain || parse_double(s, &dv) < 0)
			return err_set(why, why_len, "expected a number, got %s", shown(s, sh));
		if (k->min_inclusive ? !(dv >= k->min) || dv > k->max : !(dv > k->min) || dv > k->max)
			return err_set(why, why_len, "must be %s %.15g and at most %.15g, got %s",
				       k->min_inclusive ? "at least" : "greater than", k->min, k->max,
				       s);
		memcpy(f, &dv, sizeof(dv));
		return 0;
	case CFG_ENUM:
		for (iv = 0; k->choices[iv] != NULL; iv++)
			if (strcmp(s, k->choices[iv]) == 0) {
				memcpy(f, &iv, sizeof(iv));
				return 0;
			}
		{
			struct buf b;
			buf_init(&b);
			for (size_t i = 0; k->choices[i] != NULL; i++)
				buf_printf(&b, "%s%s", i ? ", " : "", k->choices[i]);
			err_set(why, why_len, "expected one of %s; got %s", b.data, shown(s, sh));
			buf_free(&b);
		}
		return -1;
	case CFG_LIST:
	case CFG_MAP:
	case CFG_RECORDS:
	case CFG_NODE:
		break;
	}
	return err_set(why, why_len, "internal error: not a scalar key");
}

/* Apply the default of list `k`, written "[a, b, c]" in the table. */
static void
list_default(struct config *c, const struct config_key *k)
{
	struct strlist *list = field_of(c, k);
	char why[WHY_LEN];
	size_t len = strlen(k->def);

	if (len < 2 || k->def[0] != '[' || k->def[len - 1] != ']')
		fatalx("config: bad default of %s: not [ITEM, ...]", k->name);
	for (const char *p = k->def + 1; *p != ']';) {
		size_t n = strcspn(p, ",]");
		char *item = xstrndup(p, n);
		if (n > 0 && k->check && k->check(c, item, why, sizeof(why)) < 0)
			fatalx("config: bad default of %s: %s", k->name, why);
		if (n > 0)
			strlist_add(list, item);
		free(item);
		p += n;
		p += strspn(p, ", ");
	}
}

void
config_defaults(struct config *c)
{
	char why[WHY_LEN];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_key_table[i];
		if (k->kind == CFG_LIST && k->def != NULL)
			list_default(c, k);
		if (k->def == NULL || k->kind == CFG_LIST || k->kind == CFG_MAP ||
		    k->kind == CFG_RECORDS || k->kind == CFG_NODE)
			continue;
		/* A string default is text as written, even "" or "true". */
		if (config_set_scalar(c, c, k, k->def, k->kind != CFG_STRING, why,
				      sizeof(why)) < 0)
			fatalx("config: bad default of %s: %s", k->name, why);
	}
}

int
config_str_differs(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") != 0;
}

int
config_strlist_differs(const struct strlist *a, const struct strlist *b)
{
	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return 1;
	return 0;
}

static int
strmap_differs(const struct strmap *a, const struct strmap *b)
{
	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->keys[i], b->keys[i]) != 0 || strcmp(a->values[i], b->values[i]) != 0)
			return 1;
	return 0;
}

int
config_field_differs(const struct config_key *f, const void *x, const void *y)
{
	const char *p = (const char *)x + f->offset, *q = (const char *)y + f->offset;

	switch (f->kind) {
	case CFG_STRING:
		return config_str_differs(*(char *const *)p, *(char *const *)q);
	case CFG_NUMBER:
		return *(const double *)p != *(const double *)q;
	case CFG_BOOL:
	case CFG_INT:
	case CFG_ENUM:
		return memcmp(p, q, f->size) != 0; /* int, or long */
	case CFG_LIST:
		return config_strlist_differs((const void *)p, (const void *)q);
	case CFG_MAP:
		return strmap_differs((const void *)p, (const void *)q);
	case CFG_RECORDS:
	case CFG_NODE:
		break;
	}
	fatalx("config: %s is not a scalar", f->name);
}

static int
records_differ(const struct config_key *k, const struct config_records *a,
	       const struct config_records *b)
{
	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		for (const struct config_key *f = k->fields; f->name != NULL; f++)
			if (config_field_differs(f, (const char *)a->v + i * k->record_size,
					   (const char *)b->v + i * k->record_size))
				return 1;
	return 0;
}

int
config_key_differs(const struct config_key *k, const struct config *a, const struct config *b)
{
	const void *p = (const char *)a + k->offset, *q = (const char *)b + k->offset;

	if (k->differs != NULL)
		return k->differs(a, b);
	if (k->size == 0 || k->kind == CFG_NODE)
		return 0;
	if (k->kind == CFG_LIST)
		return config_strlist_differs(p, q);
	if (k->kind == CFG_MAP)
		return strmap_differs(p, q);
	if (k->kind == CFG_RECORDS)
		return records_differ(k, p, q);
	return config_field_differs(k, a, b);
}

void
config_swap_live(struct config *run, struct config *fresh)
{
	unsigned char tmp[sizeof(struct config)];

	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_key_table[i];
		if (k->scope != RELOAD_LIVE)
			continue;
		/* The value is the field: strings, lists and records move with their owner. */
		if (k->size == 0 || k->offset + k->size > sizeof(*run))
			fatalx("config: live key %s has no field of its own", k->name);
		memcpy(tmp, (char *)run + k->offset, k->size);
		memcpy((char *)run + k->offset, (char *)fresh + k->offset, k->size);
		memcpy((char *)fresh + k->offset, tmp, k->size);
	}
}

void
config_free(struct config *c)
{
	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_key_table[i];
		if (k->size == 0)
			continue;
		if (k->kind == CFG_STRING)
			free(*(char **)field_of(c, k));
		else if (k->kind == CFG_LIST)
			strlist_free(field_of(c, k));
		else if (k->kind == CFG_MAP)
			strmap_free(field_of(c, k));
		else if (k->kind == CFG_RECORDS)
			records_free(field_of(c, k), k);
	}
	tooldefs_free(&c->tools);
	sidecars_free(&c->sidecars);
	free(c->file);
	free(c->listen_host);
	free(c->metrics_listen_host);
	memset(c, 0, sizeof(*c));
}

struct loader {
	struct yerr err;
	struct config *c;
	yaml_mark_t top;	/* start of the top-level mapping */
	int *seen;		/* config_key_count of them */
	yaml_mark_t *marks;	/* where each seen key's value starts */
};

/* The text of a scalar node for a string `label`, or NULL after an error. */
static const char *
string_of(struct loader *l, const struct ynode *nd, const char *label)
{
	char why[WHY_LEN], sh[SHOWN_LEN];

	if (nd->type != YN_SCALAR) {
		ynode_fail(&l->err, nd->mark, "%s: expected a string, got %s", label,
			   ynode_what(nd, sh));
		return NULL;
	}
	if (strlen(nd->text) != nd->len) {
		ynode_fail(&l->err, nd->mark, "%s: contains a NUL character", label);
		return NULL;
	}
	if (string_ok(nd->text, nd->plain, why, sizeof(why)) < 0) {
		ynode_fail(&l->err, nd->mark, "%s: %s", label, why);
		return NULL;
	}
	return nd->text;
}

/* Whether key `i` of mapping `m` repeats an earlier key (error reported). */
static int
is_duplicate(struct loader *l, const struct ynode *m, size_t i, const char *prefix)
{
	for (size_t j = 0; j < i; j += 2)
		if (m->kids[j]->type == YN_SCALAR &&
		    strcmp(m->kids[j]->text, m->kids[i]->text) == 0) {
			ynode_fail(&l->err, m->kids[i]->mark,
				   "duplicate key %s%s%s (first at line %zu)",
				   prefix ? prefix : "", prefix ? "." : "", m->kids[i]->text,
				   m->kids[j]->mark.line + 1);
			return 1;
		}
	return 0;
}

/* Read the list `v` of key or record field `k` into `list`. */
static int
set_list(struct loader *l, const struct config_key *k, const struct ynode *v,
	 struct strlist *list)
{
	char why[WHY_LEN], sh[SHOWN_LEN];

	if (v->type != YN_SEQ)
		return ynode_fail(&l->err, v->mark, "%s: expected a list of strings, got %s",
				  k->name, ynode_what(v, sh));
	strlist_free(list);
	for (size_t i = 0; i < v->n; i++) {
		char label[128];
		snprintf(label, sizeof(label), "%s item %zu", k->name, i + 1);
		const char *s = string_of(l, v->kids[i], label);
		if (s == NULL)
			return -1;
		if (k->check != NULL && k->check(l->c, s, why, sizeof(why)) < 0)
			return ynode_fail(&l->err, v->kids[i]->mark, "%s: %s", label, why);
		strlist_add(list, s);
	}
	return 0;
}

static int
set_map(struct loader *l, const struct config_key *k, const struct ynode *v)
{
	struct strmap *map = field_of(l->c, k);
	char why[WHY_LEN], sh[SHOWN_LEN];

	if (v->type != YN_MAP)
		return ynode_fail(&l->err, v->mark,
				  "%s: expected a mapping of names to strings, got %s", k->name,
				  ynode_what(v, sh));
	strmap_free(map);
	for (size_t i = 0; i < v->n; i += 2) {
		char label[128];
		const char *name = string_of(l, v->kids[i], k->name);
		if (name == NULL || is_duplicate(l, v, i, k->name))
			return -1;
		if (k->check != NULL && k->check(l->c, name, why, sizeof(why)) < 0)
			return ynode_fail(&l->err, v->kids[i]->mark, "%s: %s", k->name, why);
		snprintf(label, sizeof(label), "%s: %s", k->name, name);
		const char *value = string_of(l, v->kids[i + 1], label);
		if (value == NULL)
			return -1;
		strmap_add(map, name, value);
	}
	return 0;
}

/* Read one mapping of a CFG_RECORDS list into the record at `rec`. */
static int
set_record(struct loader *l, const struct config_key *k, const struct ynode *m, void *rec,
	   const char *label)
{
	char why[WHY_LEN], sh[SHOWN_LEN];

	if (m->type != YN_MAP)
		return ynode_fail(&l->err, m->mark, "%s: expected a mapping of fields, got %s",
				  label, ynode_what(m, sh));
	config_field_defaults(l->c, rec, k->fields, k->name);
	for (size_t i = 0; i < m->n; i += 2) {
		const struct ynode *kn = m->kids[i], *v = m->kids[i + 1];
		if (config_field_key_ok(m, i, why, sizeof(why)) < 0)
			return ynode_fail(&l->err, kn->mark, "%s: %s", label, why);
		const struct config_key *f = config_field_named(k->fields, kn->text);
		if (f == NULL) {
			config_unknown_field(k->fields, kn->text, why, sizeof(why));
			return ynode_fail(&l->err, kn->mark, "%s: %s", label, why);
		}
		if (f->kind == CFG_LIST) {
			if (set_list(l, f, v, (void *)((char *)rec + f->offset)) < 0)
				return -1;
		} else if (config_read_field(l->c, rec, f, v, why, sizeof(why)) < 0) {
			return ynode_fail(&l->err, v->mark, "%s: %s", label, why);
		}
	}
	for (const struct config_key *f = k->fields; f->name != NULL; f++)
		if (f->def == NULL && f->kind == CFG_STRING && *(char **)((char *)rec + f->offset) == NULL)
			return ynode_fail(&l->err, m->mark, "%s: %s is required", label, f->name);
	return 0;
}

/* Read a list of mappings into records (assets). */
static int
set_records(struct loader *l, const struct config_key *k, const struct ynode *v)
{
	struct config_records *r = field_of(l->c, k);
	char why[WHY_LEN], sh[SHOWN_LEN];

	if (v->type != YN_SEQ)
		return ynode_fail(&l->err, v->mark, "%s: expected a list of mappings, got %s",
				  k->name, ynode_what(v, sh));
	records_free(r, k);
	for (size_t i = 0; i < v->n; i++) {
		char label[128];
		snprintf(label, sizeof(label), "%s item %zu", k->name, i + 1);
		r->v = xreallocarray(r->v, r->n + 1, k->record_size);
		void *rec = (char *)r->v + r->n * k->record_size;
		memset(rec, 0, k->record_size);
		r->n++;
		if (set_record(l, k, v->kids[i], rec, label) < 0)
			return -1;
		if (k->check_record != NULL && k->check_record(l->c, i, why, sizeof(why)) < 0)
			return ynode_fail(&l->err, v->kids[i]->mark, "%s: %s", label, why);
	}
	return 0;
}

/* Store the value node `v` of key number `i`. */
static int
set_key(struct loader *l, size_t i, const struct ynode *v)
{
	const struct config_key *k = &config_key_table[i];
	char why[WHY_LEN], sh[SHOWN_LEN];

	l->seen[i] = 1;
	l->marks[i] = v->mark;
	if (k->kind == CFG_LIST)
		return set_list(l, k, v, field_of(l->c, k));
	if (k->kind == CFG_MAP)
		return set_map(l, k, v);
	if (k->kind == CFG_RECORDS)
		return set_records(l, k, v);
	if (k->kind == CFG_NODE)
		return k->node(l->c, l->err.file, v, l->err.why, l->err.why_len);
	if (v->type != YN_SCALAR)
		return ynode_fail(&l->err, v->mark, "%s: expected %s, got %s", k->name,
				  k->kind == CFG_BOOL	  ? "true or false"
				  : k->kind == CFG_INT	  ? "an integer"
				  : k->kind == CFG_NUMBER ? "a number"
							  : "a string",
				  ynode_what(v, sh));
	if (strlen(v->text) != v->len)
		return ynode_fail(&l->err, v->mark, "%s: contains a NUL character", k->name);
	if (config_set_scalar(l->c, l->c, k, v->text, v->plain, why, sizeof(why)) < 0)
		return ynode_fail(&l->err, v->mark, "%s: %s", k->name, why);
	return 0;
}

/* Report key `kn`, whose full dotted name is `full`, as unknown. */
static int
unknown_key(struct loader *l, const struct ynode *kn, const char *full)
{
	const char *last = strrchr(full, '.');
	const char *hint = suggest(full);
	char sh[SHOWN_LEN];

	if (strchr(kn->text, '.') != NULL && key_index(full) >= 0)
		return ynode_fail(&l->err, kn->mark,
				  "unknown key %s: write it nested, as %s: inside %.*s:", kn->text,
				  last + 1, (int)(last - full), full);
	if (full[0] == '\0' || strspn(full, NAME_CHARS ".") != strlen(full))
		full = shown(full, sh);
	if (hint != NULL)
		return ynode_fail(&l->err, kn->mark, "unknown key %s (did you mean %s?)", full,
				  hint);
	return ynode_fail(&l->err, kn->mark, "unknown key %s", full);
}

/* Walk a mapping of keys whose names start with `prefix` (NULL: top level). */
static int
walk(struct loader *l, const struct ynode *m, const char *prefix)
{
	for (size_t i = 0; i < m->n; i += 2) {
		const struct ynode *kn = m->kids[i], *v = m->kids[i + 1];
		char sh[SHOWN_LEN];
		char *full;
		int idx, rc, dotted;

		if (kn->type != YN_SCALAR || strlen(kn->text) != kn->len)
			return ynode_fail(&l->err, kn->mark, "keys must be plain names, not %s",
					  kn->type == YN_SCALAR ? "text with a NUL"
								: ynode_what(kn, sh));
		if (is_duplicate(l, m, i, prefix))
			return -1;
		full = prefix ? xasprintf("%s.%s", prefix, kn->text) : xstrdup(kn->text);
		dotted = strchr(kn->text, '.') != NULL; /* pool.warm is written nested */
		idx = dotted ? -1 : key_index(full);
		if (idx >= 0)
			rc = set_key(l, (size_t)idx, v);
		else if (!dotted && is_section(full) && v->type == YN_MAP)
			rc = walk(l, v, full);
		else if (!dotted && is_section(full))
			rc = ynode_fail(&l->err, v->mark, "%s: expected a mapping of keys, got %s",
					full, ynode_what(v, sh));
		else
			rc = unknown_key(l, kn, full);
		free(full);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Where key `name` was set, or the top of the file if it was not. */
static yaml_mark_t
mark_of(struct loader *l, const char *name)
{
	int i = key_index(name);

	return i >= 0 && l->seen[i] ? l->marks[i] : l->top;
}

/* The directory part of an absolute path without trailing slashes. Caller owns. */
static char *
parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

/*
 * Replace a leading "~" and every "{name}" in the path of key `key`, held in
 * *field; drop trailing slashes. The result must be absolute and not "/".
 */
static int
expand_path(struct loader *l, const char *key, char **field)
{
	struct config *c = l->c;
	const char *p = *field;
	char sh[SHOWN_LEN];
	struct buf b;

	buf_init(&b);
	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		/* getpwuid_r: a reload may run while other threads work. */
		struct passwd pwbuf, *pw = NULL;
		char pwtext[4096];
		const char *home = getenv("HOME");
		if (home == NULL || home[0] == '\0') {
			if (getpwuid_r(getuid(), &pwbuf, pwtext, sizeof(pwtext), &pw) != 0)
				pw = NULL;
			home = pw != NULL ? pw->pw_dir : NULL;
		}
		if (home == NULL || home[0] != '/') {
			buf_free(&b);
			return ynode_fail(
			    &l->err, mark_of(l, key),
			    "%s: cannot expand ~: HOME is not an absolute path and "
			    "the user has no home directory in the password database",
			    key);
		}
		buf_adds(&b, home);
		p++;
	}
	for (const char *q; (q = strstr(p, "{name}")) != NULL; p = q + 6) {
		buf_add(&b, p, (size_t)(q - p));
		buf_adds(&b, c->name);
	}
	buf_adds(&b, p);
	while (b.len > 1 && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	free(*field);
	*field = buf_release(&b);
	if ((*field)[0] != '/')
		return ynode_fail(&l->err, mark_of(l, key),
				  "%s: %s is not an absolute path (only a leading ~/ is expanded)",
				  key, shown(*field, sh));
	if (strcmp(*field, "/") == 0)
		return ynode_fail(&l->err, mark_of(l, key), "%s: must be a directory below /",
				  key);
	return 0;
}

/*
 * Whether key i was given a value that does something: set in the file,
 * and not an empty string or list, nor a zero.
 */
static int
key_on(struct loader *l, int i)
{
	if (i < 0 || !l->seen[i])
		return 0;
	const struct config_key *k = &config_key_table[i];
	const char *f = (const char *)l->c + k->offset;

	/* tools: is a node; what it gave is in the list (tools_dir's come later). */
	if (strcmp(k->name, "tools") == 0)
		return l->c->tools.n > 0;
	if (k->kind == CFG_STRING && k->size > 0)
		return (*(char *const *)f)[0] != '\0';
	if (k->kind == CFG_LIST && k->size > 0)
		return ((const struct strlist *)f)->n > 0;
	if (k->kind == CFG_INT && k->size == sizeof(long))
		return *(const long *)f != 0;
	if (k->kind == CFG_INT && k->size == sizeof(int))
		return *(const int *)f != 0;
	if (k->kind == CFG_NUMBER && k->size == sizeof(double))
		return *(const double *)f != 0;
	return 1;
}

/*
 * The kernel (kernelspec.h), then what only ipykernel honours: refused
 * for any other kernel, naming the key and the language, and the
 * checkpoints and hibernation that rest on ipykernel turned off.
 */
static int
finish_kernel(struct loader *l)
{
	struct config *c = l->c;
	char why[WHY_LEN];
	const char *key = "kernel";

	if (kernelspec_resolve(c, l->seen[key_index("kernel")], key_on(l, key_index("kernel_argv")),
			       &key, why, sizeof(why)) < 0)
		return ynode_fail(&l->err, mark_of(l, key), "%s", why);
	if (kernelspec_is_ipykernel(c))
		return 0;
	for (const struct kernelspec_only *o = kernelspec_ipykernel_only(); o->key; o++)
		if (key_on(l, key_index(o->key)))
			return ynode_fail(&l->err, mark_of(l, o->key),
					  "%s: is for ipykernel (%s); the kernel %s runs %s: "
					  "remove the key",
					  o->key, o->what, c->kernel, c->kernel_language);
	c->checkpoint_interval_s = 0;
	c->session_hibernate_after = 0;
	return 0;
}

/* The checks that involve more than one key, once all are read. */
static int
finish(struct loader *l)
{
	struct config *c = l->c;
	char why[WHY_LEN];
	const char *key;

	key = auth_config_finish(c, l->seen[key_index("auth.mode")], why, sizeof(why));
	if (key != NULL)
		return ynode_fail(&l->err, mark_of(l, key), "%s", why);

	if (!l->seen[key_index("name")])
		return ynode_fail(&l->err, l->top,
				  "name is required: it names the environment and its tools");
	if (c->default_timeout > c->max_timeout)
		return ynode_fail(&l->err,
				  l->seen[key_index("default_timeout")]
				      ? mark_of(l, "default_timeout")
				      : mark_of(l, "max_timeout"),
				  "default_timeout (%g) exceeds max_timeout (%g)",
				  c->default_timeout, c->max_timeout);
	if (expand_path(l, "build_dir", &c->build_dir) < 0 || finish_kernel(l) < 0)
		return -1;
	/* A sidecar's URL is the framework's: kernel_environment cannot replace it. */
	for (size_t i = 0; i < c->sidecars.n; i++)
		for (size_t j = 0; j < c->kernel_environment.n; j++) {
			const struct config_sidecar *sc = &c->sidecars.v[i];
			const char *k = c->kernel_environment.keys[j];
			size_t n = strlen(sc->url_env_var);
			if (strcmp(sc->url_env_var, k) == 0)
				return ynode_fail(
				    &l->err, mark_of(l, "kernel_environment"),
				    "kernel_environment: %s is rejected: it is the url_env_var "
				    "of sidecar %s",
				    k, sc->name);
			if (sc->socket && strncmp(sc->url_env_var, k, n) == 0 &&
			    (strcmp(k + n, "_SOCKET") == 0 || strcmp(k + n, "_SOCKET_FD") == 0))
				return ynode_fail(
				    &l->err, mark_of(l, "kernel_environment"),
				    "kernel_environment: %s is rejected: it holds the socket "
				    "of sidecar %s",
				    k, sc->name);
		}
	if ((key = config_egress_finish(c, why, sizeof(why))) != NULL)
		return ynode_fail(&l->err, mark_of(l, key), "%s", why);
	if (c->tool_search_backend == TOOL_BACKEND_AZURE &&
	    (c->azure_endpoint[0] == '\0' || c->azure_index[0] == '\0' ||
	     c->azure_api_key_file[0] == '\0'))
		return ynode_fail(
		    &l->err, mark_of(l, "tool_search_backend"),
		    "tool_search_backend azure_ai_search needs azure_ai_search.endpoint, "
		    ".index and .api_key_file");
	/* After `tools:`, so that a name both define is a duplicate in the file. */
	if (tooldefs_load_dir(&c->tools, c->tools_dir, l->err.why, l->err.why_len) < 0)
		return -1;
	if (c->asset_cache_dir[0] == '\0') {
		free(c->asset_cache_dir);
		c->asset_cache_dir = parent_dir(c->build_dir);
		return 0;
	}
	return expand_path(l, "asset_cache_dir", &c->asset_cache_dir);
}

int
config_load(const char *path, struct config *c, char *why, size_t why_len)
{
	struct loader *l;
	struct ynode *root = NULL;
	int rc = -1;

	config_defaults(c);
	c->file = xstrdup(path);
	if (ynode_load_file(path, &root, why, why_len) < 0)
		goto out;

	l = xcalloc(1, sizeof(*l));
	l->err.file = path;
	l->c = c;
	l->err.why = why;
	l->err.why_len = why_len;
	l->seen = xcalloc(config_key_count, sizeof(*l->seen));
	l->marks = xcalloc(config_key_count, sizeof(*l->marks));
	l->top = root->mark;
	if (root->type != YN_MAP)
		ynode_fail(&l->err, root->mark, "the top level must be a mapping of keys, not %s",
			   root->type == YN_SEQ ? "a list" : "a single value");
	else if (walk(l, root, NULL) == 0 && finish(l) == 0)
		rc = 0;
	ynode_free(root);
	free(l->seen);
	free(l->marks);
	free(l);
out:
	if (rc < 0)
		config_free(c);
	return rc;
}
