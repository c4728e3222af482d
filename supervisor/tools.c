/* tools.c - the tool table; see tools.h. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "tools.h"

static const struct tool *const tool_table[] = {
	&tool_execute,
};

#define TOOL_COUNT (sizeof(tool_table) / sizeof(tool_table[0]))

/* Write the name of `t` under configuration `cfg` into out. */
static void
tool_name(const struct tool *t, const struct config *cfg, char *out, size_t len)
{
	const char *mark = strstr(t->name_format, "{name}");
	/* Table formats are ours and hold exactly one {name}. */
	snprintf(out, len, "%.*s%s%s", (int)(mark - t->name_format), t->name_format, cfg->name,
		 mark + 6);
}

struct json_object *
tools_list(const struct config *cfg)
{
	struct json_object *list = json_object_new_array();
	char name[256];

	for (size_t i = 0; i < TOOL_COUNT; i++) {
		struct json_object *t = json_object_new_object();
		tool_name(tool_table[i], cfg, name, sizeof(name));
		json_object_object_add(t, "name", json_object_new_string(name));
		tool_table[i]->describe(cfg, t);
		json_object_array_add(list, t);
	}
	return list;
}

const struct tool *
tools_find(const struct config *cfg, const char *name)
{
	char candidate[256];

	for (size_t i = 0; i < TOOL_COUNT; i++) {
		tool_name(tool_table[i], cfg, candidate, sizeof(candidate));
		if (strcmp(candidate, name) == 0)
			return tool_table[i];
	}
	return NULL;
}
