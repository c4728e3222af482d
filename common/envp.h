/*
 * envp.h - reading an environment vector that is not ours (a kernel's,
 * as START gave it), "NAME=value" strings ending with NULL.
 */
#ifndef COMMON_ENVP_H
#define COMMON_ENVP_H

/* The value of NAME in envp (NULL: an empty vector), or NULL. Borrowed from envp. */
const char *envp_get(char *const *envp, const char *name);

#endif
