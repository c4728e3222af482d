/*
 * kernel_warm.h - the code a pooled kernel runs before it is handed out.
 *
 * Run once in every kernel the worker starts, before the kernel is
 * announced ready: what bounds a long session's history, what makes a
 * warm call's reply quick with every byte of output in its own call, then
 * tools_dir put on sys.path, pool.preload's imports, code_prefix, and an
 * expression whose result is displayed (what makes the first execution
 * slow is the display path's first use) but stored nowhere.
 */
#ifndef SUPERVISOR_KERNEL_WARM_H
#define SUPERVISOR_KERNEL_WARM_H

struct config;

/*
 * The warm-up code for kernels of `cfg`; for a kernel other than ipykernel,
 * its code_prefix and its language's displayed value, or NULL (none).
 * Caller frees.
 */
char *kernel_warm_code(const struct config *cfg);

#endif
