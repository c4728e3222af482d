/*
 * toolreg_check.h - codeexecd -n's check of the tool registry against the
 * environment: every tool's `module` must import in the environment's
 * python (with tools_dir on its path, as kernels have it) and define the
 * tool's `name` as something callable.
 *
 * Run when the configuration is checked, never while requests are served:
 * it starts the environment's interpreter, which the unprivileged front
 * may not do.
 */
#ifndef SUPERVISOR_TOOLREG_CHECK_H
#define SUPERVISOR_TOOLREG_CHECK_H

#include <stddef.h>

struct config;

/* Seconds the imports may take in all. */
#define TOOLREG_CHECK_TIMEOUT_S 120

/*
 * Check every tool of cfg->tools. Returns 0 when all import (or there are
 * none), 1 when the environment is not built (nothing checked; why says
 * so), -1 with one line per tool that fails, "FILE:LINE: tool NAME: ...",
 * in why.
 */
int toolreg_check_modules(const struct config *cfg, char *why, size_t why_len);

/*
 * Check tools_dir at start-up: a directory, readable by kernels of
 * kernel_uid_range (others), and not writable by kernels
 * (they import from it: one that could write there would change the tools
 * of every later session). Without kernel_uid_range kernels run as the
 * daemon's user: `user` when started as root, else the one it runs as.
 * Returns 0, or -1 with the reason in why.
 */
int toolreg_check_dir(const struct config *cfg, char *why, size_t why_len);

#endif
