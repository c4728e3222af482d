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

/* Find uv and the base interpreter, or say how to get them. */
static int
uv_prepare(struct build_ctx *b)
{
	b->tool = builder_find("uv", builder_tool_path());
	if (b->tool == NULL) {
		snprintf(b->why, b->why_len,
			 "type uv needs the uv program, which is not in %s: install it "
			 "(pipx install uv, or see https://docs.astral.sh/uv/) or use type: pip",
			 builder_tool_path());
		return -1;
	}
	return builder_base_python(b, "uv", "python3");
}

/* uv venv, then uv pip install of the requirements (with ipykernel if needed). */
static int
uv_build(struct build_ctx *b)
{
	char *venv[] = {b->tool, (char *)"venv", (char *)"--python",
			b->base_python, (char *)b->prefix,
			b->cfg->system_site_packages ? (char *)"--system-site-packages" : NULL,
			NULL};
	char *install[] = {b->tool, (char *)"pip", (char *)"install", (char *)"--python",
			   (char *)b->env_python, NULL};

	return builder_venv(b, venv, install);
}

const struct builder builder_uv = {
	.type = ENV_UV,
	.prepare = uv_prepare,
	.build = uv_build,
};
