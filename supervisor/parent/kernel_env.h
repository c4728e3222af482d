/*
 * kernel_env.h - what the privileged parent starts a kernel with: its
 * interpreter, its argv and its complete process environment. What the
 * front must know of it too (the MIME types a kernel may return, where a
 * session's packages go, pip's options) is kernel_env_rules.h.
 *
 * Kernels never inherit the daemon's environment (seed 000, "Kernel process
 * environment"): they get a sanitized baseline, the framework's own values
 * and the configured kernel_environment, nothing else. A matplotlib_backend
 * other than the default is one more: MPLBACKEND (none is an argument that
 * undoes ipykernel's inline default instead).
 */
#ifndef SUPERVISOR_KERNEL_ENV_H
#define SUPERVISOR_KERNEL_ENV_H

#include <json-c/json.h>

struct config;

/* Path of the environment's interpreter. Caller owns. */
char *kernel_env_python(const struct config *cfg);
/* The kernel's whole environment as {name: value}. Caller owns. */
struct json_object *kernel_env_build(const struct config *cfg);
/* An environment object as "NAME=value" strings, NULL-terminated. Caller frees. */
char **kernel_env_strings(struct json_object *env);
/*
 * The kernel's argv: the environment's interpreter running ipykernel on
 * {connection_file}, with the history kernel_history asks for; for another
 * kernel, its kernelspec's argv or kernel_argv (kernelspec.h). Caller owns.
 */
struct json_object *kernel_env_argv(const struct config *cfg);
/*
 * Give env the session's own HOME, its working directory `workdir`: its
 * IPython directory (startup files, history), Jupyter data and user site
 * are the session's, never another's. So are the packages it installs:
 * pip's target and the head of sys.path are its SESSION_PKGS_DIR (but in
 * seccomp mode, where the startup puts them once locked).
 */
void kernel_env_session(const struct config *cfg, struct json_object *env, const char *workdir);
/* Home directory of the user the daemon runs as ("/" if it has none). Borrowed. */
const char *kernel_env_home(void);

#endif
