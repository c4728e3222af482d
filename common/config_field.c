/*
 * config_field.c - the reading of one mapping of fields by a field table:
 * the records of CFG_RECORDS keys (config.c), each sidecar
 * (sidecar_config.c) and each tool definition (tooldef.c). One copy, so
 * that a field's name, duplicate, suggestion and value read alike in all.
 */
#include "autoconf.h"

#include <stddef.h>
#include <string.h>

#include "config.h"
#include "err.h"
#include "log.h"
#include "shown.h"
#include "ynode.h"

const struct config_key *
config_field_named(const struct config_key *fields, const char *name)
{
	for (const struct config_key *f = fields; f->name != NULL; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

int
config_field_key_ok(const struct ynode *m, size_t i, char *why, size_t why_len)
{
	const struct ynode *kn = m->kids[i];

	if (kn->type != YN_SCALAR || strlen(kn->text) != kn->len)
		return err_set(why, why_len, "field names must be plain names");
	for (size_t j = 0; j < i; j += 2)
		if (m->kids[j]->type == YN_SCALAR && strcmp(m->kids[j]->text, kn->text) == 0)
			return err_set(why, why_len, "field %s given twice (first at line %zu)",
				       kn->text, m->kids[j]->mark.line + 1);
	return 0;
}

int
config_unknown_field(const struct config_key *fields, const char *name, char *why,
		     size_t why_len)
{
	char sh[SHOWN_LEN];
	const char *best = NULL;
	size_t bestd = SHOWN_NEAR + 1;

	for (const struct config_key *f = fields; f->name != NULL; f++) {
		size_t d = shown_distance(name, f->name);
		if (d < bestd) {
			best = f->name;
			bestd = d;
		}
	}
	if (best != NULL)
		return err_set(why, why_len, "unknown field %s (did you mean %s?)",
			       shown(name, sh), best);
	return err_set(why, why_len, "unknown field %s", shown(name, sh));
}

int
config_read_field(struct config *c, void *rec, const struct config_key *f, const struct ynode *v,
		  char *why, size_t why_len)
{
	char reason[256], sh[SHOWN_LEN];

	if (v->type != YN_SCALAR)
		return err_set(why, why_len, "%s: expected a single value, got %s", f->name,
			       ynode_what(v, sh));
	if (strlen(v->text) != v->len)
		return err_set(why, why_len, "%s: contains a NUL character", f->name);
	if (config_set_scalar(c, rec, f, v->text, v->plain, reason, sizeof(reason)) < 0)
		return err_set(why, why_len, "%s: %s", f->name, reason);
	return 0;
}

int
config_field_is_scalar(const struct config_key *f)
{
	return f->kind != CFG_LIST && f->kind != CFG_MAP && f->kind != CFG_RECORDS &&
	       f->kind != CFG_NODE;
}

void
config_field_defaults(struct config *c, void *rec, const struct config_key *fields,
		      const char *owner)
{
	char why[256];

	for (const struct config_key *f = fields; f->name != NULL; f++)
		if (f->def != NULL && config_field_is_scalar(f) &&
		    config_set_scalar(c, rec, f, f->def, f->kind != CFG_STRING, why,
				      sizeof(why)) < 0)
			fatalx("config: bad default of %s.%s: %s", owner, f->name, why);
}
