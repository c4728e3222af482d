/*
 * builder_conda.c - type conda: dependency_file is environment.yml content,
 * checked with libyaml, given ipykernel when it lacks it, and built with
 * micromamba, mamba or conda (seed 000, "Environment types").
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "buf.h"
#include "builder.h"
#include "log.h"
#include "xmalloc.h"

/* Tried in this order when conda_executable is empty. */
static const char *const conda_tools[] = {"micromamba", "mamba", "conda", NULL};

/* Set err to "dependency_file (environment.yml), line N: why"; returns -1. */
static int
yml_error(struct build_ctx *b, const yaml_node_t *nd, const char *why)
{
	snprintf(b->why, b->why_len,
		 "dependency_file (environment.yml for type conda), line %zu: %s",
		 nd ? nd->start_mark.line + 1 : 1, why);
	return -1;
}

/* Whether `nd` is a non-empty scalar. */
static int
is_scalar(const yaml_node_t *nd)
{
	return nd != NULL && nd->type == YAML_SCALAR_NODE && nd->data.scalar.length > 0;
}

/* Every item of sequence `seq` a non-empty string. */
static int
check_strings(struct build_ctx *b, yaml_document_t *doc, yaml_node_t *seq, const char *what)
{
	char why[160];

	if (seq->type != YAML_SEQUENCE_NODE) {
		snprintf(why, sizeof(why), "%s must be a list", what);
		return yml_error(b, seq, why);
	}
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(doc, *it);
		if (!is_scalar(item)) {
			snprintf(why, sizeof(why), "every item of %s must be a non-empty string",
				 what);
			return yml_error(b, item, why);
		}
	}
	return 0;
}

/* Whether a string item of `seq` names `name`. */
static int
seq_names(yaml_document_t *doc, yaml_node_t *seq, const char *name)
{
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(doc, *it);
		if (is_scalar(item) &&
		    builder_spec_names((const char *)item->data.scalar.value, name))
			return 1;
	}
	return 0;
}

/*
 * Check the dependencies list: conda specs, and at most one {pip: [...]}.
 * Sets *has_kernel when a conda spec or a pip requirement names ipykernel.
 */
static int
check_dependencies(struct build_ctx *b, yaml_document_t *doc, yaml_node_t *deps, int *has_kernel)
{
	if (deps->type != YAML_SEQUENCE_NODE)
		return yml_error(b, deps, "dependencies must be a list");
	*has_kernel = 0;
	for (yaml_node_item_t *it = deps->data.sequence.items.start;
	     it < deps->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(doc, *it);
		if (is_scalar(item)) {
			*has_kernel |= builder_spec_names((const char *)item->data.scalar.value,
							  "ipykernel");
			continue;
		}
		if (item == NULL || item->type != YAML_MAPPING_NODE ||
		    item->data.mapping.pairs.top - item->data.mapping.pairs.start != 1)
			return yml_error(b, item, "a dependency must be a package spec or "
						  "a mapping {pip: [requirements]}");
		yaml_node_pair_t *p = item->data.mapping.pairs.start;
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (!is_scalar(k) || strcmp((const char *)k->data.scalar.value, "pip") != 0)
			return yml_error(b, item, "the only mapping allowed in dependencies is "
						  "{pip: [requirements]}");
		if (check_strings(b, doc, v, "pip") == -1)
			return -1;
		*has_kernel |= seq_names(doc, v, "ipykernel");
	}
	return 0;
}

/* Check the top-level keys; returns the dependencies node, or NULL after an error. */
static yaml_node_t *
check_document(struct build_ctx *b, yaml_document_t *doc)
{
	yaml_node_t *root = yaml_document_get_root_node(doc), *deps = NULL;
	char why[160];

	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		yml_error(b, root, "the document must be a mapping with a dependencies list");
		return NULL;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *key = is_scalar(k) ? (const char *)k->data.scalar.value : "";
		if (strcmp(key, "dependencies") == 0) {
			deps = v;
		} else if (strcmp(key, "channels") == 0) {
			if (check_strings(b, doc, v, "channels") == -1)
				return NULL;
		} else if (strcmp(key, "name") == 0 || strcmp(key, "prefix") == 0) {
			if (!is_scalar(v)) {
				snprintf(why, sizeof(why), "%s must be a string", key);
				yml_error(b, v, why);
				return NULL;
			}
		} else if (strcmp(key, "variables") != 0 || v->type != YAML_MAPPING_NODE) {
			snprintf(why, sizeof(why),
				 "unexpected key %.40s (known: name, channels, dependencies, "
				 "variables, prefix)",
				 key);
			yml_error(b, k, why);
			return NULL;
		}
	}
	if (deps == NULL)
		yml_error(b, root, "there is no dependencies list");
	return deps;
}

/* libyaml's output handler: append to a struct buf. */
static int
emit_to_buf(void *data, unsigned char *bytes, size_t size)
{
	buf_add(data, bytes, size);
	return 1;
}

/* Write `doc` out as YAML text (this consumes the document). Caller owns. */
static char *
emit_document(yaml_document_t *doc)
{
	yaml_emitter_t em;
	struct buf out;

	buf_init(&out);
	if (!yaml_emitter_initialize(&em))
		fatalx("libyaml: cannot initialize an emitter");
	yaml_emitter_set_output(&em, emit_to_buf, &out);
	yaml_emitter_set_unicode(&em, 1);
	if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, doc) || !yaml_emitter_close(&em))
		fatalx("libyaml: cannot write the environment file: %s",
		       em.problem ? em.problem : "?");
	yaml_emitter_delete(&em);
	return buf_release(&out);
}

/*
 * The environment.yml the tool gets: dependency_file, checked, with
 * ipykernel appended to dependencies when nothing names it. NULL on error.
 */
static char *
conda_envfile(struct build_ctx *b)
{
	const char *text = b->cfg->dependency_file;
	yaml_parser_t parser;
	yaml_document_t doc;
	char *out = NULL;
	int has_kernel = 0;

	if (!yaml_parser_initialize(&parser))
		fatalx("libyaml: cannot initialize a parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(b->why, b->why_len,
			 "dependency_file (environment.yml for type conda), line %zu: %s",
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "bad YAML");
		yaml_parser_delete(&parser);
		return NULL;
	}
	yaml_parser_delete(&parser);
	yaml_node_t *deps = check_document(b, &doc);
	if (deps == NULL || check_dependencies(b, &doc, deps, &has_kernel) == -1) {
		yaml_document_delete(&doc);
		return NULL;
	}
	if (!has_kernel) {
		log_info("build: dependency_file does not name ipykernel; adding it");
		int deps_id = (int)(deps - doc.nodes.start) + 1;
		int item = yaml_document_add_scalar(&doc, NULL, (yaml_char_t *)"ipykernel", -1,
						    YAML_PLAIN_SCALAR_STYLE);
		if (item == 0 || !yaml_document_append_sequence_item(&doc, deps_id, item))
			fatalx("libyaml: cannot add ipykernel to the environment file");
	}
	out = emit_document(&doc);
	return out;
}

/* The tool: conda_executable, or the first of conda_tools found. */
static char *
conda_tool(struct build_ctx *b)
{
	const char *want = b->cfg->conda_executable;

	if (want[0] != '\0') {
		char *tool = builder_find(want, builder_tool_path());
		if (tool == NULL)
			snprintf(b->why, b->why_len,
				 "type conda: conda_executable %s is not an executable in %s: "
				 "install it (micromamba: see https://mamba.readthedocs.io) "
				 "or fix conda_executable",
				 want, builder_tool_path());
		return tool;
	}
	for (size_t i = 0; conda_tools[i] != NULL; i++) {
		char *tool = builder_find(conda_tools[i], builder_tool_path());
		if (tool != NULL)
			return tool;
	}
	snprintf(b->why, b->why_len,
		 "type conda needs micromamba, mamba or conda, and none is in %s: install one "
		 "(micromamba: see https://mamba.readthedocs.io; conda: Miniforge) or set "
		 "conda_executable",
		 builder_tool_path());
	return NULL;
}

/* Check the environment file and find the tool before anything is made. */
static int
conda_prepare(struct build_ctx *b)
{
	if ((b->envfile = conda_envfile(b)) == NULL || (b->tool = conda_tool(b)) == NULL)
		return -1;
	const char *base = strrchr(b->tool, '/') ? strrchr(b->tool, '/') + 1 : b->tool;
	b->micromamba = strncmp(base, "micromamba", 10) == 0;
	return 0;
}

/* Write the file beside the new prefix, create the environment, keep a copy in it. */
static int
conda_build(struct build_ctx *b)
{
	char *file = xasprintf("%s.yml", b->prefix);
	char *mm[] = {b->tool, (char *)"create", (char *)"--yes", (char *)"--prefix",
		      (char *)b->prefix, (char *)"--file", file, NULL};
	char *cd[] = {b->tool, (char *)"env", (char *)"create", (char *)"--prefix",
		      (char *)b->prefix, (char *)"--file", file, NULL};
	int rc = -1;

	if (builder_write(b, file, b->envfile) == 0 &&
	    builder_run(b, b->micromamba ? mm : cd) == 0) {
		char *copy = xasprintf("%s/.codeexecd-environment.yml", b->prefix);
		rc = builder_write(b, copy, b->envfile);
		free(copy);
	}
	unlink(file);
	free(file);
	return rc;
}

const struct builder builder_conda = {
	.type = ENV_CONDA,
	.prepare = conda_prepare,
	.build = conda_build,
};
