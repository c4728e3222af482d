/*
 * session_pkgs.h - where a session's own packages go ({name}_install_packages,
 * %pip install): a directory in its working directory, so they are removed
 * with it and never land in the shared environment. Kernels have it on
 * sys.path ahead of the environment's site-packages: the supervisor says so
 * in their environment (kernel_env.c), the seccomp startup once it is
 * locked (worker/sandbox_seccomp.c).
 */
#ifndef COMMON_SESSION_PKGS_H
#define COMMON_SESSION_PKGS_H

/* Relative to the session's working directory. */
#define SESSION_PKGS_DIR ".packages"

#endif
