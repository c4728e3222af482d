/*
 * kernelspec.h - which Jupyter kernel serves execute_{name}_code: the
 * built-in ipykernel of the environment, a kernelspec found where Jupyter
 * looks for one, or an explicit kernel_argv with its kernel_language.
 *
 * Owns the kernelspec search (the environment's share/jupyter/kernels,
 * then /usr/local/share/jupyter/kernels, then /usr/share/jupyter/kernels),
 * the reading of its kernel.json into the configuration's kernel_argv and
 * kernel_language, and the list of keys only ipykernel honours (config.c
 * refuses them for any other kernel, naming the key and the language).
 */
#ifndef COMMON_KERNELSPEC_H
#define COMMON_KERNELSPEC_H

#include <stddef.h>

struct config;

/* The value of `kernel` that means the environment's own ipykernel. */
#define KERNELSPEC_IPYKERNEL "ipykernel"
/* What connection file argument every argv must hold. */
#define KERNELSPEC_PLACEHOLDER "{connection_file}"

/* One key only ipykernel honours, and what it is for. */
struct kernelspec_only {
	const char *key;
	const char *what;
};

/* 1 when `c` runs the environment's ipykernel (the default). */
int kernelspec_is_ipykernel(const struct config *c);

/*
 * Resolve `kernel`, `kernel_argv` and `kernel_language` of c (read, with
 * build_dir expanded): a kernelspec's argv and language replace the empty
 * kernel_argv and kernel_language. kernel_set and argv_set say whether the
 * file gave those keys. 0, or -1 with why[why_len] set and *key naming the
 * key the reason is about.
 */
int kernelspec_resolve(struct config *c, int kernel_set, int argv_set, const char **key,
		       char *why, size_t why_len);

/* kernel_language meanwhile, while the kernelspec waits for the build. */
#define KERNELSPEC_LANGUAGE_LATER "the language its kernelspec names"

/*
 * When no kernelspec `kernel` is found while the configuration has
 * additional_commands, kernelspec_resolve takes it on trust (they may
 * install one into the environment) and sets kernel_after_build; once the
 * environment is built, kernelspec_settle resolves it as kernelspec_resolve
 * would have, or says why not. 0, or -1 with why[why_len].
 */
int kernelspec_settle(struct config *c, char *why, size_t why_len);

/* The keys only ipykernel honours, ending with {NULL, NULL}. */
const struct kernelspec_only *kernelspec_ipykernel_only(void);

#endif
