/* kernelspec.c - see kernelspec.h. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config.h"
#include "err.h"
#include "kernelspec.h"
#include "xmalloc.h"

/* Where Jupyter's own lookup finds system kernelspecs, after the environment's. */
static const char *const system_dirs[] = {
	"/usr/local/share/jupyter/kernels",
	"/usr/share/jupyter/kernels",
};

/* The keys only ipykernel honours (codeexecd.yaml(5) says so of each). */
static const struct kernelspec_only only[] = {
	{"kernel_history", "IPython's history"},
	{"matplotlib_backend", "matplotlib's backend in a Python kernel"},
	{"wheelhouse", "the wheels of install_packages, which runs pip"},
	{"pool.preload", "Python modules imported into each idle kernel (put the language's "
			 "own loading into code_prefix)"},
	{"checkpoint.max_bytes", "checkpoints, which dill writes of a Python namespace"},
	{"checkpoint.max_seconds", "checkpoints, which dill writes of a Python namespace"},
	{"checkpoint.interval_s", "automatic checkpoints, which dill writes of a Python namespace"},
	{"session_hibernate_after", "hibernation, which keeps the namespace in a checkpoint"},
	{"tools", "domain tools, which are Python functions"},
	{"tools_dir", "domain tools, which are Python functions"},
	{NULL, NULL},
};

const struct kernelspec_only *
kernelspec_ipykernel_only(void)
{
	return only;
}

int
kernelspec_is_ipykernel(const struct config *c)
{
	return c->kernel_argv_given == 0 && strcmp(c->kernel, KERNELSPEC_IPYKERNEL) == 0;
}

/* Set the list l to the strings of array a, replacing what it held. */
static void
set_list(struct strlist *l, struct json_object *a)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->n = json_object_array_length(a);
	l->v = xcalloc(l->n + 1, sizeof(*l->v));
	for (size_t i = 0; i < l->n; i++)
		l->v[i] = xstrdup(json_object_get_string(json_object_array_get_idx(a, i)));
}

/* Whether some item of l holds the connection file placeholder. */
static int
has_placeholder(const struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (strstr(l->v[i], KERNELSPEC_PLACEHOLDER) != NULL)
			return 1;
	return 0;
}

/*
 * Read kernel.json at `path` into c: its argv (strings, with the
 * placeholder), language and interrupt_mode. An `env` it sets is refused:
 * codeexecd gives kernels only its own environment. 0, or -1 with why.
 */
static int
read_spec(struct config *c, const char *path, char *why, size_t why_len)
{
	struct json_object *o = json_object_from_file(path), *argv, *lang, *env, *im;
	int rc = -1;

	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		err_set(why, why_len, "kernel: %s is not a JSON object: %s", path,
			json_util_get_last_err() ? json_util_get_last_err() : "not an object");
		goto out;
	}
	if (!json_object_object_get_ex(o, "argv", &argv) ||
	    !json_object_is_type(argv, json_type_array) || json_object_array_length(argv) == 0) {
		err_set(why, why_len, "kernel: %s has no argv list", path);
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(argv); i++)
		if (!json_object_is_type(json_object_array_get_idx(argv, i), json_type_string)) {
			err_set(why, why_len, "kernel: item %zu of the argv of %s is not a string",
				i, path);
			goto out;
		}
	if (!json_object_object_get_ex(o, "language", &lang) ||
	    !json_object_is_type(lang, json_type_string) || json_object_get_string_len(lang) == 0) {
		err_set(why, why_len, "kernel: %s names no language", path);
		goto out;
	}
	if (json_object_object_get_ex(o, "env", &env) && json_object_is_type(env, json_type_object) &&
	    json_object_object_length(env) > 0) {
		err_set(why, why_len,
			"kernel: %s sets env, which codeexecd does not pass on: give its argv as "
			"kernel_argv and its variables as kernel_environment",
			path);
		goto out;
	}
	set_list(&c->kernel_argv, argv);
	if (!has_placeholder(&c->kernel_argv)) {
		err_set(why, why_len, "kernel: the argv of %s has no %s", path,
			KERNELSPEC_PLACEHOLDER);
		goto out;
	}
	free(c->kernel_language);
	c->kernel_language = xstrdup(json_object_get_string(lang));
	c->kernel_interrupt_message = json_object_object_get_ex(o, "interrupt_mode", &im) &&
				      strcmp(json_object_get_string(im), "message") == 0;
	rc = 0;
out:
	json_object_put(o);
	return rc;
}

/*
 * Whether the kernel's program can run: an absolute one must be
 * executable; a bare name must be on the kernel's PATH (kernel_env.c's:
 * the environment's bin, then /usr/local/bin, /usr/bin, /bin), unless the
 * environment is not built yet and so may still provide it. 0, or -1
 * with why.
 */
static int
program_ok(const struct config *c, const char *key, char *why, size_t why_len)
{
	const char *prog = c->kernel_argv.v[0];
	char *bin = xasprintf("%s/bin", c->build_dir);
	const char *dirs[] = {bin, "/usr/local/bin", "/usr/bin", "/bin"};
	int found = 0;

	if (strchr(prog, '/') != NULL) {
		free(bin);
		if (prog[0] == '/' && access(prog, X_OK) == 0)
			return 0;
		return err_set(why, why_len, "%s: the kernel's program %s: %s", key, prog,
			       prog[0] == '/' ? strerror(errno) : "not an absolute path or a bare name");
	}
	for (size_t i = 0; !found && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *path = xasprintf("%s/%s", dirs[i], prog);
		found = access(path, X_OK) == 0;
		free(path);
	}
	int built = access(bin, F_OK) == 0;
	free(bin);
	if (found || !built)
		return 0;
	return err_set(why, why_len, "%s: the kernel's program %s is in none of %s/bin, "
		       "/usr/local/bin, /usr/bin and /bin", key, prog, c->build_dir);
}

/* Whether the kernelspec name may be a directory name (no path of its own). */
static int
name_ok(const char *n)
{
	return n[0] != '\0' && n[0] != '.' && strchr(n, '/') == NULL;
}

/* Read the first kernelspec `kernel` names where Jupyter looks: 0, -1
 * with why (a kernel.json it cannot take), or -2 when there is none. */
static int
find_spec(struct config *c, char *why, size_t why_len)
{
	char *env_dir = xasprintf("%s/share/jupyter/kernels", c->build_dir);
	const char *dirs[] = {env_dir, system_dirs[0], system_dirs[1]};
	int rc = -2;

	for (size_t i = 0; rc == -2 && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *path = xasprintf("%s/%s/kernel.json", dirs[i], c->kernel);
		if (access(path, R_OK) == 0)
			rc = read_spec(c, path, why, why_len);
		free(path);
	}
	free(env_dir);
	return rc;
}

/* find_spec's `rc` as kernelspec_resolve answers it: a missing
 * kernelspec named, a found one's program checked. */
static int
finish_spec(const struct config *c, int rc, char *why, size_t why_len)
{
	if (rc == -2)
		return err_set(why, why_len, "kernel: no kernelspec %s in %s/share/jupyter/kernels, "
			       "%s or %s", c->kernel, c->build_dir, system_dirs[0], system_dirs[1]);
	return rc == 0 ? program_ok(c, "kernel", why, why_len) : rc;
}

int
kernelspec_resolve(struct config *c, int kernel_set, int argv_set, const char **key, char *why,
		   size_t why_len)
{
	c->kernel_argv_given = argv_set;
	if (argv_set) {
		*key = "kernel_argv";
		if (kernel_set)
			return err_set(why, why_len,
				       "kernel_argv: give either kernel (a kernelspec) or "
				       "kernel_argv with kernel_language, not both");
		if (!has_placeholder(&c->kernel_argv))
			return err_set(why, why_len, "kernel_argv: no item holds %s",
				       KERNELSPEC_PLACEHOLDER);
		if (c->kernel_language[0] == '\0')
			return err_set(why, why_len,
				       "kernel_argv: kernel_language must say the kernel's language");
		free(c->kernel);
		c->kernel = xstrdup("kernel_argv");
		return program_ok(c, "kernel_argv", why, why_len);
	}
	*key = "kernel_language";
	if (c->kernel_language[0] != '\0')
		return err_set(why, why_len,
			       "kernel_language: only with kernel_argv (a kernelspec names its own)");
	*key = "kernel";
	if (kernelspec_is_ipykernel(c)) {
		free(c->kernel_language);
		c->kernel_language = xstrdup("python");
		return 0;
	}
	if (!name_ok(c->kernel))
		return err_set(why, why_len, "kernel: %s is not a kernelspec name", c->kernel);
	int rc = find_spec(c, why, why_len);
	/* additional_commands may install it into the environment they build. */
	if (rc == -2 && c->additional_commands.n > 0) {
		c->kernel_after_build = 1;
		free(c->kernel_language);
		c->kernel_language = xstrdup(KERNELSPEC_LANGUAGE_LATER);
		return 0;
	}
	return finish_spec(c, rc, why, why_len);
}

int
kernelspec_settle(struct config *c, char *why, size_t why_len)
{
	if (!c->kernel_after_build)
		return 0;
	c->kernel_after_build = 0;
	free(c->kernel_language);
	c->kernel_language = xstrdup("");
	int rc = finish_spec(c, find_spec(c, why, why_len), why, why_len);
	if (rc == 0 || why_len == 0)
		return rc;
	size_t len = strlen(why);
	snprintf(why + len, why_len - len, " (after additional_commands built the environment)");
	return rc;
}
