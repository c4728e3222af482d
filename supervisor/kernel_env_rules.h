/*
 * kernel_env_rules.h - what the front's calls and a kernel's environment
 * (kernel_env.h) must agree on, read from the configuration alone: the
 * MIME types a kernel may return, where a session's packages go, and the
 * index options pip installs them with. Both processes use them: the
 * parent as it starts a kernel, the front as it serves a call.
 */
#ifndef SUPERVISOR_KERNEL_ENV_RULES_H
#define SUPERVISOR_KERNEL_ENV_RULES_H

#include <json-c/json.h>

struct config;

/*
 * The pip options of per-session installs, as argv items: --no-index
 * --find-links WHEELHOUSE when wheelhouse is set, else the index options
 * of dependency_file's option lines (--index-url, --extra-index-url,
 * --find-links, --trusted-host, --no-index). Caller owns.
 */
struct json_object *kernel_env_pip_options(const struct config *cfg);
/* The same options as the PIP_* variables pip reads, put into the
 * environment object `env`, so that %pip install in a kernel uses them too. */
void kernel_env_pip_vars(const struct config *cfg, struct json_object *env);
/* The absolute SESSION_PKGS_DIR of working directory `workdir`. Caller owns. */
char *kernel_env_pkgs_dir(const char *workdir);
/*
 * The MIME types kept in rich_outputs: allow_mime, in its order, narrowed
 * to those in `asked` (NULL-terminated, borrowed; NULL: not narrowed),
 * with text/plain always (last if allow_mime lacks it). NULL-terminated;
 * caller frees (strv_free).
 */
char **kernel_env_mime(const struct config *cfg, char *const *asked);
/* Whether a call may ask for `mime`: text/plain or an allow_mime type. */
int kernel_env_mime_allowed(const struct config *cfg, const char *mime);

#endif
