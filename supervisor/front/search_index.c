/* search_index.c - see search_index.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "search_index.h"
#include "tooldef.h"
#include "toolreg.h"
#include "upstream.h"
#include "upstream_tooldef.h"
#include "xmalloc.h"

/* Indexes kept: distinct sets of upstreams among the identities in use. */
#define KEPT 4

struct merged {
	char *key;		/* the upstream lists it was built from, as JSON */
	unsigned long generation; /* toolreg_generation() then */
	struct tooldefs ups;	/* the upstream entries (owned) */
	struct tool_def *all;	/* domain (borrowed fields) then upstream definitions */
	struct toolreg *reg;	/* over all */
	unsigned long used;	/* for the eviction of the least recently used */
};

/* Guarded by pool_lock, as the live registry is. */
static struct merged kept[KEPT];
static unsigned long clock_;

static void
merged_free(struct merged *m)
{
	toolreg_free(m->reg);
	free(m->all);
	tooldefs_free(&m->ups);
	free(m->key);
	memset(m, 0, sizeof(*m));
}

/*
 * The lists of the upstreams `identity` may call, {NAME: [TOOL...]}, only
 * the tools exposed; NULL when none has a tool. Why one is missing, into
 * *errors.
 */
static struct json_object *
upstream_lists(const char *identity, struct json_object **errors)
{
	struct json_object *all = NULL;
	char why[512];

	*errors = NULL;
	for (size_t i = 0; i < upstream_count(); i++) {
		if (!upstream_allowed(i, identity))
			continue;
		struct json_object *tools = upstream_tools(i, 0, why, sizeof(why));
		if (tools == NULL) {
			if (*errors == NULL)
				*errors = json_object_new_object();
			json_object_object_add(*errors, upstream_name(i), json_object_new_string(why));
			continue;
		}
		if (json_object_array_length(tools) == 0) {
			json_object_put(tools);
			continue;
		}
		if (all == NULL)
			all = json_object_new_object();
		json_object_object_add(all, upstream_name(i), tools);
	}
	return all;
}

/* The upstream entries of `lists` into m->ups, and m's index over them and reg's. */
static void
build(struct merged *m, const struct toolreg *reg, struct json_object *lists)
{
	json_object_object_foreach(lists, name, tools)
	{
		int i = upstream_find(name);
		for (size_t k = 0; k < json_object_array_length(tools); k++) {
			struct json_object *t = json_object_array_get_idx(tools, k), *tn;
			if (!json_object_object_get_ex(t, "name", &tn) ||
			    !upstream_exposes((size_t)i, json_object_get_string(tn)))
				continue;
			m->ups.v = xreallocarray(m->ups.v, m->ups.n + 1, sizeof(*m->ups.v));
			if (upstream_tooldef(name, t, &m->ups.v[m->ups.n]) == 0)
				m->ups.n++;
		}
	}
	size_t nd = toolreg_size(reg);
	struct tooldefs all = {xcalloc(nd + m->ups.n + 1, sizeof(*all.v)), nd + m->ups.n};
	for (size_t i = 0; i < nd; i++)
		all.v[i] = *toolreg_tool(reg, i);
	if (m->ups.n > 0)
		memcpy(all.v + nd, m->ups.v, m->ups.n * sizeof(*m->ups.v));
	m->all = all.v;
	m->reg = toolreg_build(&all);
}

const struct toolreg *
search_index(const char *identity, struct json_object **errors)
{
	const struct toolreg *live = toolreg_live();
	struct json_object *lists = upstream_lists(identity, errors);

	if (lists == NULL)
		return live;
	const char *key = json_object_to_json_string_ext(lists, JSON_C_TO_STRING_PLAIN);
	unsigned long gen = toolreg_generation();
	struct merged *slot = &kept[0];
	for (int i = 0; i < KEPT; i++) {
		struct merged *m = &kept[i];
		if (m->key && m->generation == gen && strcmp(m->key, key) == 0) {
			m->used = ++clock_;
			json_object_put(lists);
			return m->reg;
		}
		if (m->used < slot->used)
			slot = m;
	}
	merged_free(slot);
	slot->key = xstrdup(key);
	slot->generation = gen;
	slot->used = ++clock_;
	build(slot, live, lists);
	json_object_put(lists);
	return slot->reg;
}
