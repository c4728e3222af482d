/*
 * envbuild.h - the kernel environment in build_dir (seed 000, "Environment
 * model" and "UV environment completion marker").
 *
 * An environment is ready only when bin/python and .env_build_complete both
 * exist; the marker is written last, after every dependency and every
 * additional_commands entry succeeded. Beside it, .env_build_digest records
 * what it was built from, so a changed configuration rebuilds it and an
 * unchanged one never does.
 *
 * A build never happens in place: it runs in a new sibling directory,
 * BUILD_DIR.gen-RANDOM, at its final path (venvs and conda environments
 * record their own path), and only once complete does build_dir become, by
 * one atomic rename, a symbolic link to it. A crash at any instant leaves
 * the previous ready environment or none; leftovers are removed at the next
 * start. BUILD_DIR.lock serializes daemons that share a build_dir.
 */
#ifndef SUPERVISOR_ENVBUILD_H
#define SUPERVISOR_ENVBUILD_H

#include <stddef.h>

struct config;

#define ENVBUILD_MARKER ".env_build_complete"
#define ENVBUILD_DIGEST ".env_build_digest"

/*
 * Make sure the environment is ready: use it if complete and built from
 * this configuration; else, with auto_build or `force` (--warm), build it.
 * Returns 0, or -1 with the reason in err.
 */
int envbuild_ensure(const struct config *cfg, int force, char *why, size_t why_len);

/* The digest of what the environment is built from, as hex. Caller owns. */
char *envbuild_digest(const struct config *cfg);

#endif
