/*
 * builder.h - the one interface of the environment builders (pip, uv,
 * conda), and the helpers they share: finding a program, running a build
 * step as a child process, and deciding whether ipykernel must be added.
 *
 * envbuild.c decides when and where to build; a builder only turns the
 * configuration into an environment at `prefix`, a directory that does not
 * exist yet and that is the environment's final real path (envbuild links
 * build_dir to it once the build is complete).
 */
#ifndef SUPERVISOR_BUILDER_H
#define SUPERVISOR_BUILDER_H

#include <stddef.h>
#include <time.h>

#include "config.h"

/* One build in progress. Owned by envbuild.c; builders read it. */
struct build_ctx {
	const struct config *cfg;
	const char *prefix;	/* the new environment; builders create it */
	char **envp;		/* sanitized environment of every step */
	time_t deadline;	/* the whole build ends by then (build_timeout_s) */
	const char *env_python;	/* the new environment's interpreter, once built */
	char *why;		/* the caller's reason buffer (err.h) */
	size_t why_len;
	/* What prepare found; owned by the build, freed by builder_clear. */
	char *tool;		/* the build program (uv, micromamba, mamba, conda), or NULL */
	char *base_python;	/* the interpreter a venv is made from (pip, uv), or NULL */
	char *envfile;		/* conda: the environment.yml given to the tool, or NULL */
	int micromamba;		/* conda: the tool is micromamba, whose command line differs */
};

struct builder {
	enum env_type type;
	/*
	 * Check everything the build needs before anything is made: the
	 * programs (a missing one is reported with the type and how to install
	 * it) and the dependency file. Returns 0, or -1 with why set.
	 */
	int (*prepare)(struct build_ctx *b);
	/* Create the environment at b->prefix and install the dependencies. */
	int (*build)(struct build_ctx *b);
};

extern const struct builder builder_pip;
extern const struct builder builder_uv;
extern const struct builder builder_conda;

/* The builder of type `t`. */
const struct builder *builder_for(enum env_type t);
/* Free what prepare found (b->tool, b->base_python, b->envfile), whatever happened. */
void builder_clear(struct build_ctx *b);

/*
 * Path of program `name`: itself if it holds a '/' and is executable, else
 * the first executable match in `path` (a colon-separated list). NULL if
 * none. Caller owns.
 */
char *builder_find(const char *name, const char *path);
/*
 * Find the interpreter a venv is made from (the `python` setting) into
 * b->base_python. When it is missing, -1 with b->why saying that type
 * `type` needs it and to install it with apt-get install `packages`.
 */
int builder_base_python(struct build_ctx *b, const char *type, const char *packages);
/* Search order for build tools: the daemon's PATH, then the fixed build PATH. */
const char *builder_tool_path(void);
/* The fixed PATH of build steps, also where `python` is looked up. */
#define BUILDER_PATH "/usr/local/bin:/usr/bin:/bin"

/*
 * Run argv (argv[0] a path) as a build step: its own process group, the
 * directory "/", b->envp, stdin from /dev/null, stdout and stderr to the
 * log line by line. The group is killed at b->deadline. Returns 0 when the
 * step exits 0, else -1 with the command and its status in b->err.
 */
int builder_run(struct build_ctx *b, char *const argv[]);
/* Whether `python` can import `module` (a quiet step; nothing logged). */
int builder_can_import(struct build_ctx *b, const char *python, const char *module);

/*
 * Whether a requirements.txt text has a requirement line for `name`
 * (compared as pip normalizes names: case and runs of -_. ignored).
 */
int builder_requires(const char *requirements, const char *name);
/* Whether one requirement or conda spec (after "channel::") is for `name`. */
int builder_spec_names(const char *spec, const char *name);
/*
 * The requirements a pip or uv build installs: dependency_file, plus a
 * line "ipykernel" when no line names it and `python` (the new
 * environment's) cannot already import it. Caller owns.
 */
char *builder_requirements(struct build_ctx *b, const char *python);
/*
 * A venv build (pip, uv): run `venv`, which makes the environment at
 * b->prefix; then, when builder_requirements for b->env_python has
 * anything to install, write it to a file in the environment and run
 * `install` (argv up to its NULL) followed by "-r FILE". Returns 0, or -1
 * with b->why.
 */
int builder_venv(struct build_ctx *b, char *const venv[], char *const install[]);
/* Whether a requirements text has anything but blank lines and comments. */
int builder_has_requirements(const char *text);
/* Write `text` to `path` (mode 0644, synced). Returns 0, or -1 with b->err. */
int builder_write(struct build_ctx *b, const char *path, const char *text);

#endif
