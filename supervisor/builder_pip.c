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
	char *python = builder_find(b->cfg->python, BUILDER_PATH);

	if (python == NULL) {
		snprintf(b->why, b->why_len,
			 "type pip needs the interpreter %s, which is not in %s: install it "
			 "(apt-get install python3 python3-venv) or set python to its path",
			 b->cfg->python, BUILDER_PATH);
		return -1;
	}
	b->state = python;
	return 0;
}

/*
 * venv, then pip. With system_site_packages and a base interpreter that has
 * pip, the venv gets no pip of its own: the base one installs into it, which
 * is faster and works offline (ensurepip is slow).
 */
static int
pip_build(struct build_ctx *b)
{
	const char *base = b->state;
	int borrow_pip = b->cfg->system_site_packages && builder_can_import(b, base, "pip");
	/* borrow_pip implies system_site_packages, so the NULLs end the list right. */
	char *venv[] = {(char *)base, (char *)"-m", (char *)"venv", (char *)b->prefix,
			b->cfg->system_site_packages ? (char *)"--system-site-packages" : NULL,
			borrow_pip ? (char *)"--without-pip" : NULL, NULL};
	if (builder_run(b, venv) == -1)
		return -1;

	char *python = xasprintf("%s/bin/python", b->prefix);
	char *reqs = builder_requirements(b, python);
	int rc = 0;
	if (builder_has_requirements(reqs)) {
		char *file = xasprintf("%s/.codeexecd-requirements.txt", b->prefix);
		char *pip[] = {python, (char *)"-m", (char *)"pip", (char *)"install",
			       (char *)"--no-input", (char *)"-r", file, NULL};
		rc = builder_write(b, file, reqs) == -1 || builder_run(b, pip) == -1 ? -1 : 0;
		free(file);
	}
	free(reqs);
	free(python);
	return rc;
}

/* Release the interpreter's path. */
static void
pip_finish(struct build_ctx *b)
{
	free(b->state);
	b->state = NULL;
}

const struct builder builder_pip = {
	.type = ENV_PIP,
	.prepare = pip_prepare,
	.build = pip_build,
	.finish = pip_finish,
};
