/*
 * envbuild.h - the kernel environment in build_dir (seed 000, "Environment
 * model" and "UV environment completion marker").
 *
 * An environment is ready only when bin/python and .env_build_complete both
 * exist; the marker is written last, after every dependency and every
 * additional_commands entry succeeded. Builders run as child processes with
 * a sanitized environment; their output goes to the log.
 */
#ifndef SUPERVISOR_ENVBUILD_H
#define SUPERVISOR_ENVBUILD_H

#include <stddef.h>

struct config;

#define ENVBUILD_MARKER ".env_build_complete"

/*
 * Make sure the environment is ready: use it if complete, else (with
 * auto_build) remove a stale one and build it. Returns 0, or -1 with the
 * reason in err.
 */
int envbuild_ensure(const struct config *cfg, char *err, size_t errlen);

#endif
