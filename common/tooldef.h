/*
 * tooldef.h - domain tool definitions (issue 15): the `tools:` list of the
 * configuration and the *.yaml files of `tools_dir`, read into records with
 * the field names of Agora's ToolDefinition.
 *
 * The fields are declared in field tables as the key table declares its
 * keys, and read by its grammar and field reader (config_field.c): a
 * value is read, and an unknown field named, as in the rest of the file.
 * Every error is reported as "FILE:LINE:COLUMN: tools item N: ..." with
 * libyaml's marks, and all of a list's errors are reported, one a line,
 * not just the first. What is checked: required fields, unknown fields,
 * Python identifiers for names, dotted module names, type expressions,
 * defaults only (and always) on optional parameters, and tool names unique
 * across every file.
 */
#ifndef COMMON_TOOLDEF_H
#define COMMON_TOOLDEF_H

#include <stddef.h>

struct ynode;

struct tool_param {
	char *name;
	char *type;	   /* a Python type expression, as "list[str] | None" */
	char *description;
	char *def;	   /* optional parameters: the default as a Python literal; else NULL */
};

struct tool_def {
	char *name;	   /* a Python identifier: what `from MODULE import NAME` imports */
	char *description;
	char *module;	   /* dotted Python module name */
	char *category;	   /* "" when not given */
	struct tool_param *params; /* the required ones first */
	size_t n_params;
	size_t n_required;
	char *return_type;
	char *return_description; /* "" when not given */
	char **examples;   /* code snippets */
	size_t n_examples;
	char *file;	   /* where it is defined, and the 1-based line */
	size_t line;
};

struct tooldefs {
	struct tool_def *v;
	size_t n;
};

/*
 * Append the tool definitions of `list` (a YAML sequence of mappings read
 * from `file`) to `t`. Returns 0, or -1 with every error found, one a line,
 * in why (cut at why_len). On failure `t` keeps what it held before.
 */
int tooldefs_read_node(struct tooldefs *t, const char *file, const struct ynode *list, char *why,
		       size_t why_len);
/*
 * Append the definitions of every *.yaml file of directory `dir`, in name
 * order. Each file holds a list of definitions, or a mapping whose only key
 * is `tools` holding one. Returns 0, or -1 with the errors in why.
 */
int tooldefs_load_dir(struct tooldefs *t, const char *dir, char *why, size_t why_len);
/* Release everything `t` holds; `t` is left empty. */
void tooldefs_free(struct tooldefs *t);
/* Whether `s` is a Python type expression as `type` fields take them. */
int tooldef_type_ok(const char *s);
/* Whether `s` is a Python identifier (ASCII) / dotted module name. */
int tooldef_identifier_ok(const char *s);
int tooldef_module_ok(const char *s);
/* The tool's signature, "name(a: int, b: str = 'x') -> float". Caller owns. */
char *tooldef_signature(const struct tool_def *d);

#endif
