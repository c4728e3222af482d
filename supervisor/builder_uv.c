/*
 * builder_uv.c - type uv: `uv venv` from `python`, then `uv pip install`
 * of the requirements (seed 000, "Environment types").
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>

#include "builder.h"
#include "log.h"
#include "xmalloc.h"

struct uv_state {
	char *uv;
	char *python;
};

/* Find uv and the base interpreter, or say how to get them. */
static int
uv_prepare(struct build_ctx *b)
{
	struct uv_state *st = xcalloc(1, sizeof(*st));

	b->state = st;
	st->uv = builder_find("uv", builder_tool_path());
	if (st->uv == NULL) {
		snprintf(b->why, b->why_len,
			 "type uv needs the uv program, which is not in %s: install it "
			 "(pipx install uv, or see https://docs.astral.sh/uv/) or use type: pip",
			 builder_tool_path());
		return -1;
	}
	st->python = builder_find(b->cfg->python, BUILDER_PATH);
	if (st->python == NULL) {
		snprintf(b->why, b->why_len,
			 "type uv needs the interpreter %s, which is not in %s: install it "
			 "(apt-get install python3) or set python to its path",
			 b->cfg->python, BUILDER_PATH);
		return -1;
	}
	return 0;
}

/* uv venv, then uv pip install of the requirements (with ipykernel if needed). */
static int
uv_build(struct build_ctx *b)
{
	struct uv_state *st = b->state;
	char *venv[] = {st->uv, (char *)"venv", (char *)"--python",
			st->python, (char *)b->prefix,
			b->cfg->system_site_packages ? (char *)"--system-site-packages" : NULL,
			NULL};
	if (builder_run(b, venv) == -1)
		return -1;

	char *python = xasprintf("%s/bin/python", b->prefix);
	char *reqs = builder_requirements(b, python);
	int rc = 0;
	if (builder_has_requirements(reqs)) {
		char *file = xasprintf("%s/.codeexecd-requirements.txt", b->prefix);
		char *install[] = {st->uv, (char *)"pip", (char *)"install", (char *)"--python",
				   python, (char *)"-r", file, NULL};
		rc = builder_write(b, file, reqs) == -1 || builder_run(b, install) == -1 ? -1 : 0;
		free(file);
	}
	free(reqs);
	free(python);
	return rc;
}

/* Release the paths prepare found. */
static void
uv_finish(struct build_ctx *b)
{
	struct uv_state *st = b->state;

	if (st != NULL) {
		free(st->uv);
		free(st->python);
		free(st);
	}
	b->state = NULL;
}

const struct builder builder_uv = {
	.type = ENV_UV,
	.prepare = uv_prepare,
	.build = uv_build,
	.finish = uv_finish,
};
