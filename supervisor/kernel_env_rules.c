/* kernel_env_rules.c - see kernel_env_rules.h. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "kernel_env_rules.h"
#include "session_pkgs.h"
#include "xmalloc.h"

/*
 * The index options of a requirements file that per-session installs take
 * over, each with its short form (or NULL), whether it takes a value, and
 * the variable pip reads it from (a list, space-separated, when repeated).
 */
static const struct {
	const char *name, *short_name;
	int has_value;
	const char *var;
} pip_index_options[] = {
	{"--index-url", "-i", 1, "PIP_INDEX_URL"},
	{"--extra-index-url", NULL, 1, "PIP_EXTRA_INDEX_URL"},
	{"--find-links", "-f", 1, "PIP_FIND_LINKS"},
	{"--trusted-host", NULL, 1, "PIP_TRUSTED_HOST"},
	{"--no-index", NULL, 0, "PIP_NO_INDEX"},
};

#define N_PIP_OPTIONS (sizeof(pip_index_options) / sizeof(pip_index_options[0]))

/* Every output's fallback, kept whatever allow_mime says. */
static const char fallback_mime[] = "text/plain";

/* Index of the option `tok` ("--name", "--name=v", "-i") names, or -1. */
static int
pip_option_of(const char *tok)
{
	for (size_t i = 0; i < N_PIP_OPTIONS; i++) {
		size_t n = strlen(pip_index_options[i].name);
		if (strncmp(tok, pip_index_options[i].name, n) == 0 &&
		    (tok[n] == '\0' || tok[n] == '='))
			return (int)i;
		if (pip_index_options[i].short_name &&
		    strcmp(tok, pip_index_options[i].short_name) == 0)
			return (int)i;
	}
	return -1;
}

/* Add option `i` of one dependency_file line, its value from `rest`, to out. */
static void
add_pip_option(struct json_object *out, int i, const char *tok, const char *rest)
{
	const char *eq = strchr(tok, '=');
	char value[4096];

	if (!pip_index_options[i].has_value) {
		json_object_array_add(out, json_object_new_string(pip_index_options[i].name));
		return;
	}
	if (eq) {
		snprintf(value, sizeof(value), "%s", eq + 1);
	} else {
		rest += strspn(rest, " \t");
		snprintf(value, sizeof(value), "%.*s", (int)strcspn(rest, " \t#"), rest);
	}
	if (value[0] == '\0')
		return; /* pip refused it when the environment was built */
	json_object_array_add(out, json_object_new_string(pip_index_options[i].name));
	json_object_array_add(out, json_object_new_string(value));
}

struct json_object *
kernel_env_pip_options(const struct config *cfg)
{
	struct json_object *out = json_object_new_array();

	if (cfg->wheelhouse[0] != '\0') {
		json_object_array_add(out, json_object_new_string("--no-index"));
		json_object_array_add(out, json_object_new_string("--find-links"));
		json_object_array_add(out, json_object_new_string(cfg->wheelhouse));
		return out;
	}
	if (cfg->type == ENV_CONDA)
		return out; /* environment.yml: no pip option lines */
	for (const char *line = cfg->dependency_file; *line != '\0';) {
		size_t len = strcspn(line, "\n");
		char tok[4096];
		const char *p = line + strspn(line, " \t");
		size_t tlen = strcspn(p, " \t\n");
		if (p < line + len && tlen < sizeof(tok)) {
			snprintf(tok, sizeof(tok), "%.*s", (int)tlen, p);
			char *lineend = xasprintf("%.*s", (int)(line + len - (p + tlen)), p + tlen);
			int i = pip_option_of(tok);
			if (i >= 0)
				add_pip_option(out, i, tok, lineend);
			free(lineend);
		}
		line += len + (line[len] == '\n');
	}
	return out;
}

void
kernel_env_pip_vars(const struct config *cfg, struct json_object *env)
{
	struct json_object *opts = kernel_env_pip_options(cfg);
	struct buf vals[N_PIP_OPTIONS];

	for (size_t i = 0; i < N_PIP_OPTIONS; i++)
		buf_init(&vals[i]);
	for (size_t k = 0; k < json_object_array_length(opts); k++) {
		int i = pip_option_of(json_object_get_string(json_object_array_get_idx(opts, k)));
		if (!pip_index_options[i].has_value) {
			buf_adds(&vals[i], "1");
			continue;
		}
		const char *v = json_object_get_string(json_object_array_get_idx(opts, ++k));
		if (i == 0 || vals[i].len == 0) /* one index URL: the last one wins */
			vals[i].len = 0;
		else
			buf_adds(&vals[i], " ");
		buf_adds(&vals[i], v);
	}
	for (size_t i = 0; i < N_PIP_OPTIONS; i++) {
		if (vals[i].len > 0)
			json_object_object_add(env, pip_index_options[i].var,
					       json_object_new_string(vals[i].data));
		buf_free(&vals[i]);
	}
	json_object_put(opts);
}

char *
kernel_env_pkgs_dir(const char *workdir)
{
	return xasprintf("%s/" SESSION_PKGS_DIR, workdir);
}

/* Whether NULL-terminated `v` holds `s`. */
static int
strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return 1;
	return 0;
}

char **
kernel_env_mime(const struct config *cfg, char *const *asked)
{
	const struct strlist *l = &cfg->allow_mime;
	char **v = xcalloc(l->n + 2, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (asked == NULL || strv_has(asked, l->v[i]) || strcmp(l->v[i], fallback_mime) == 0)
			v[n++] = xstrdup(l->v[i]);
	if (!strv_has(v, fallback_mime))
		v[n++] = xstrdup(fallback_mime);
	return v;
}

int
kernel_env_mime_allowed(const struct config *cfg, const char *mime)
{
	if (strcmp(mime, fallback_mime) == 0)
		return 1;
	for (size_t i = 0; i < cfg->allow_mime.n; i++)
		if (strcmp(cfg->allow_mime.v[i], mime) == 0)
			return 1;
	return 0;
}
