/* upstream_tooldef.c - see upstream_tooldef.h. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pylit.h"
#include "upstream_tooldef.h"
#include "xmalloc.h"

/* Python's keywords (keyword.kwlist), which ident() gives a trailing _. */
static const char *const keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break",
	"class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
	"from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
	"pass", "raise", "return", "try", "while", "with", "yield",
};

static int
is_keyword(const char *s)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strcmp(s, keywords[i]) == 0)
			return 1;
	return 0;
}

static int
ident_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

char *
upstream_ident(const char *name)
{
	struct buf b;

	buf_init(&b);
	if (name[0] == '\0' || (name[0] >= '0' && name[0] <= '9'))
		buf_adds(&b, "_");
	for (const char *p = name; *p; p++)
		buf_add(&b, ident_char((unsigned char)*p) ? p : "_", 1);
	buf_add(&b, "", 1);
	if (is_keyword(b.data)) {
		b.len--;
		buf_add(&b, "_", 2);
	}
	return buf_release(&b);
}

/* JSON Schema's type name as the Python type it stands for. */
static const char *
py_type(const char *t)
{
	static const char *const map[][2] = {
		{"string", "str"}, {"integer", "int"}, {"number", "float"}, {"boolean", "bool"},
		{"array", "list"}, {"object", "dict"}, {"null", "None"},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(t, map[i][0]) == 0)
			return map[i][1];
	return "Any";
}

/* The Python type of property schema p: "str", "str | None", "Any". Caller owns. */
static char *
param_type(struct json_object *p)
{
	struct json_object *t;
	struct buf b;

	if (!json_object_object_get_ex(p, "type", &t))
		return xstrdup("Any");
	if (json_object_is_type(t, json_type_string))
		return xstrdup(py_type(json_object_get_string(t)));
	if (!json_object_is_type(t, json_type_array) || json_object_array_length(t) == 0)
		return xstrdup("Any");
	buf_init(&b);
	for (size_t i = 0; i < json_object_array_length(t); i++) {
		struct json_object *e = json_object_array_get_idx(t, i);
		buf_printf(&b, "%s%s", i ? " | " : "",
			   json_object_is_type(e, json_type_string) ? py_type(json_object_get_string(e))
								   : "Any");
	}
	buf_add(&b, "", 1);
	return buf_release(&b);
}

/* Whether `name` is in inputSchema's `required` array. */
static int
is_required(struct json_object *schema, const char *name)
{
	struct json_object *req;

	if (!json_object_object_get_ex(schema, "required", &req) ||
	    !json_object_is_type(req, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(req); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(req, i));
		if (s && strcmp(s, name) == 0)
			return 1;
	}
	return 0;
}

static const char *
string_field(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "";
}

/* Whether d already has a parameter called `name` (two properties, one identifier). */
static int
has_param(const struct tool_def *d, const char *name)
{
	for (size_t i = 0; i < d->n_params; i++)
		if (strcmp(d->params[i].name, name) == 0)
			return 1;
	return 0;
}

/* Add the properties of `schema` that are (not) required, as the warm-up orders them. */
static void
add_params(struct tool_def *d, struct json_object *schema, int required)
{
	struct json_object *props;

	if (!json_object_object_get_ex(schema, "properties", &props) ||
	    !json_object_is_type(props, json_type_object))
		return;
	json_object_object_foreach(props, key, p)
	{
		if (is_required(schema, key) != required)
			continue;
		char *name = upstream_ident(key);
		if (has_param(d, name)) {
			free(name);
			continue;
		}
		struct json_object *def = NULL;
		struct tool_param *tp;
		d->params = xreallocarray(d->params, d->n_params + 1, sizeof(*d->params));
		tp = &d->params[d->n_params++];
		tp->name = name;
		tp->type = param_type(p);
		tp->description = xstrdup(string_field(p, "description"));
		tp->def = NULL;
		if (!required) {
			struct buf lit;
			buf_init(&lit);
			if (json_object_is_type(p, json_type_object) &&
			    json_object_object_get_ex(p, "default", &def))
				pylit_json(&lit, def);
			else
				buf_adds(&lit, "None");
			buf_add(&lit, "", 1);
			tp->def = buf_release(&lit);
		}
	}
	if (required)
		d->n_required = d->n_params;
}

/* What the function returns: structuredContent's keys, or the content. */
static void
set_return(struct tool_def *d, struct json_object *tool)
{
	struct json_object *out, *props;
	struct buf b;

	if (!json_object_object_get_ex(tool, "outputSchema", &out) ||
	    !json_object_is_type(out, json_type_object)) {
		d->return_type = xstrdup("Any");
		d->return_description = xstrdup("");
		return;
	}
	d->return_type = xstrdup("dict");
	buf_init(&b);
	if (json_object_object_get_ex(out, "properties", &props) &&
	    json_object_is_type(props, json_type_object)) {
		const char *sep = "with ";
		json_object_object_foreach(props, key, v)
		{
			(void)v;
			buf_printf(&b, "%s%s", sep, key);
			sep = ", ";
		}
	}
	buf_add(&b, "", 1);
	d->return_description = buf_release(&b);
}

/* The example: the import, and a call with the required arguments. */
static void
set_example(struct tool_def *d, const char *up)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "from %s import %s\nresult = %s.%s(", UPSTREAM_PACKAGE, up, up, d->name);
	for (size_t i = 0; i < d->n_required; i++)
		buf_printf(&b, "%s%s=...", i ? ", " : "", d->params[i].name);
	buf_adds(&b, ")");
	buf_add(&b, "", 1);
	d->examples = xcalloc(1, sizeof(*d->examples));
	d->examples[0] = buf_release(&b);
	d->n_examples = 1;
}

int
upstream_tooldef(const char *up, struct json_object *tool, struct tool_def *d)
{
	struct json_object *name, *schema = NULL;

	memset(d, 0, sizeof(*d));
	if (!json_object_is_type(tool, json_type_object) ||
	    !json_object_object_get_ex(tool, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return -1;
	d->name = upstream_ident(json_object_get_string(name));
	d->description = xstrdup(string_field(tool, "description"));
	d->module = xasprintf("%s.%s", UPSTREAM_PACKAGE, up);
	d->category = xstrdup(up);
	if (json_object_object_get_ex(tool, "inputSchema", &schema) &&
	    json_object_is_type(schema, json_type_object)) {
		add_params(d, schema, 1);
		add_params(d, schema, 0);
	}
	set_return(d, tool);
	set_example(d, up);
	d->file = xasprintf("upstream %s", up);
	return 0;
}

void
upstream_tooldef_free(struct tool_def *d)
{
	struct tooldefs one = {d, 1};

	/* tooldefs_free frees the array too: move d's fields to one of its own. */
	one.v = xmalloc(sizeof(*d));
	*one.v = *d;
	tooldefs_free(&one);
	memset(d, 0, sizeof(*d));
}

int
upstream_tooldef_is(const struct tool_def *d)
{
	size_t n = strlen(UPSTREAM_PACKAGE);

	return strncmp(d->module, UPSTREAM_PACKAGE, n) == 0 && d->module[n] == '.';
}

const char *
upstream_tooldef_upstream(const struct tool_def *d)
{
	return d->module + strlen(UPSTREAM_PACKAGE) + 1;
}

char *
upstream_tooldef_signature(const struct tool_def *d)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "%s.%s(%s", upstream_tooldef_upstream(d), d->name, d->n_params ? "*, " : "");
	for (size_t i = 0; i < d->n_params; i++) {
		const struct tool_param *p = &d->params[i];
		buf_printf(&b, "%s%s: %s", i ? ", " : "", p->name, p->type);
		if (p->def)
			buf_printf(&b, " = %s", p->def);
	}
	buf_printf(&b, ") -> %s", d->return_type);
	buf_add(&b, "", 1);
	return buf_release(&b);
}
