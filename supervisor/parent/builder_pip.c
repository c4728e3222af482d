/*
 * builder_pip.c - type pip: a venv made from `python`, then pip installs
 * the requirements (seed 000, "Environment types").
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>

#include "builder.h"
#include "log.h"
#include "xmalloc.h"

/* Find the base interpreter; the build needs nothing else. */
static int
pip_prepare(struct build_ctx *b)
{
	return builder_base_python(b, "pip", "python3 python3-venv");
}

/*
 * venv, then pip. With system_site_packages and a base interpreter that has
 * pip, the venv gets no pip of its own: the base one installs into it, which
 * is faster and works offline (ensurepip is slow).
 */
static int
pip_build(struct build_ctx *b)
{
	const char *base = b->base_python;
	int borrow_pip = b->cfg->system_site_packages && builder_can_import(b, base, "pip");
	/* borrow_pip implies system_site_packages, so the NULLs end the list right. */
	char *venv[] = {(char *)base, (char *)"-m", (char *)"venv", (char *)b->prefix,
			b->cfg->system_site_packages ? (char *)"--system-site-packages" : NULL,
			borrow_pip ? (char *)"--without-pip" : NULL, NULL};
	char *pip[] = {(char *)b->env_python, (char *)"-m", (char *)"pip", (char *)"install",
		       (char *)"--no-input", NULL};

	return builder_venv(b, venv, pip);
}

const struct builder builder_pip = {
	.type = ENV_PIP,
	.prepare = pip_prepare,
	.build = pip_build,
};
