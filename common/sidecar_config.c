/* sidecar_config.c - see sidecar_config.h. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "err.h"
#include "log.h"
#include "sidecar_config.h"
#include "xmalloc.h"
#include "ynode.h"

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

static const char *const restarts[] = {"on-failure", "always", "never", NULL};

const char *
sidecar_restart_name(enum sidecar_restart r)
{
	return (unsigned)r < 3 ? restarts[r] : "?";
}

/* Reading state: the file, and where the first error goes. */
struct rd {
	const char *file;
	char *why;
	size_t why_len;
	char label[48];
	int (*env_name_ok)(const char *name, char *why, size_t why_len);
};

static int __attribute__((format(printf, 3, 4)))
bad(struct rd *r, const struct ynode *at, const char *fmt, ...)
{
	char text[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return err_set(r->why, r->why_len, "%s:%zu:%zu: %s: %s", r->file, at->mark.line + 1,
		       at->mark.column + 1, r->label, text);
}

/* A scalar node's text, or NULL (reported) if it is not one. */
static const char *
scalar(struct rd *r, const struct ynode *v, const char *field)
{
	if (v->type != YN_SCALAR) {
		bad(r, v, "%s: expected a single value", field);
		return NULL;
	}
	if (strlen(v->text) != v->len) {
		bad(r, v, "%s: contains a NUL character", field);
		return NULL;
	}
	return v->text;
}

#define SFIELD(f) \
	.offset = offsetof(struct config_sidecar, f), \
	.size = sizeof(((struct config_sidecar *)0)->f)

/*
 * The fields of one sidecar. The scalar ones are read by the key table's
 * grammar (config_set_scalar), `limits` by its limits.* rows; `command`
 * and `env` by read_command and read_env. Scope: RELOAD_SIDECARS restarts
 * the sidecar with the new value; RELOAD_RESTART fields are what kernels
 * and the front know it by.
 */
static const struct config_key sidecar_fields[] = {
	{.name = "name", .kind = CFG_STRING, SFIELD(name), .scope = RELOAD_RESTART},
	{.name = "command", .kind = CFG_LIST, SFIELD(command), .scope = RELOAD_SIDECARS},
	{.name = "env", .kind = CFG_MAP, .def = "{}", SFIELD(env), .scope = RELOAD_SIDECARS},
	{.name = "use_env_python", .kind = CFG_BOOL, .def = "true", SFIELD(use_env_python),
	 .scope = RELOAD_SIDECARS},
	{.name = "url_env_var", .kind = CFG_STRING, SFIELD(url_env_var), .scope = RELOAD_RESTART},
	{.name = "host", .kind = CFG_STRING, .def = "127.0.0.1", SFIELD(host),
	 .scope = RELOAD_RESTART},
	{.name = "port", .kind = CFG_INT, .def = "0", SFIELD(port_configured), .min = 0,
	 .max = 65535, .scope = RELOAD_RESTART},
	{.name = "health_path", .kind = CFG_STRING, .def = "/health", SFIELD(health_path),
	 .scope = RELOAD_SIDECARS},
	{.name = "readiness_timeout_s", .kind = CFG_NUMBER, .def = "60",
	 SFIELD(readiness_timeout_s), .min = 0.1, .min_inclusive = 1, .max = 3600,
	 .scope = RELOAD_SIDECARS},
	{.name = "socket", .kind = CFG_BOOL, .def = "false", SFIELD(socket),
	 .scope = RELOAD_RESTART},
	{.name = "restart", .kind = CFG_ENUM, .def = "on-failure", SFIELD(restart),
	 .choices = restarts, .scope = RELOAD_SIDECARS},
	{.name = "limits.memory_mb", .kind = CFG_INT, .def = "0", SFIELD(limit_memory_mb),
	 .min = 0, .max = 16777216, .scope = RELOAD_SIDECARS},
	{.name = "limits.pids", .kind = CFG_INT, .def = "0", SFIELD(limit_pids), .min = 0,
	 .max = 4194304, .scope = RELOAD_SIDECARS},
	{.name = "limits.cpu", .kind = CFG_NUMBER, .def = "0", SFIELD(limit_cpu), .min = 0,
	 .min_inclusive = 1, .max = 1024, .scope = RELOAD_SIDECARS},
	{.name = NULL},
};

_Static_assert(sizeof(enum sidecar_restart) == sizeof(int), "CFG_ENUM fields are stored as int");

const struct config_key *
sidecar_config_fields(void)
{
	return sidecar_fields;
}

/* Read scalar field `f` of a sidecar from `v`, as every key's scalar is read. */
static int
read_scalar(struct rd *r, const struct ynode *v, const struct config_key *f,
	    struct config_sidecar *sc)
{
	char why[256];

	if (scalar(r, v, f->name) == NULL)
		return -1;
	if (config_set_scalar(NULL, sc, f, v->text, v->plain, why, sizeof(why)) == -1)
		return bad(r, v, "%s: %s", f->name, why);
	return 0;
}

/* An environment variable name (letters, digits, _), not starting with a digit. */
static int
env_name_valid(const char *s)
{
	size_t len = strlen(s);
	return len > 0 && !(s[0] >= '0' && s[0] <= '9') &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

static int
read_command(struct rd *r, const struct ynode *v, struct config_sidecar *sc)
{
	if (v->type != YN_SEQ || v->n == 0)
		return bad(r, v, "command: expected a non-empty list of arguments");
	sc->command.v = xcalloc(v->n, sizeof(char *));
	for (size_t i = 0; i < v->n; i++) {
		const char *s = scalar(r, v->kids[i], "command");
		if (s == NULL)
			return -1;
		sc->command.v[sc->command.n++] = xstrdup(s);
	}
	return 0;
}

static int
read_env(struct rd *r, const struct ynode *v, struct config_sidecar *sc)
{
	char why[256];

	if (v->type == YN_SCALAR && v->plain && ynode_is_null_word(v->text))
		return 0;
	if (v->type != YN_MAP)
		return bad(r, v, "env: expected a mapping of NAME: value");
	sc->env.keys = xcalloc(v->n / 2 + 1, sizeof(char *));
	sc->env.values = xcalloc(v->n / 2 + 1, sizeof(char *));
	for (size_t i = 0; i < v->n; i += 2) {
		const char *k = scalar(r, v->kids[i], "env"), *val;
		if (k == NULL || (val = scalar(r, v->kids[i + 1], "env")) == NULL)
			return -1;
		if (r->env_name_ok(k, why, sizeof(why)) == -1)
			return bad(r, v->kids[i], "env: %s", why);
		if (strncmp(k, "SIDECAR_", 8) == 0)
			return bad(r, v->kids[i],
				   "env: %s is rejected: codeexecd sets SIDECAR_HOST and SIDECAR_PORT "
				   "for the sidecar", k);
		sc->env.keys[sc->env.n] = xstrdup(k);
		sc->env.values[sc->env.n++] = xstrdup(val);
	}
	return 0;
}

static int
read_limits(struct rd *r, const struct ynode *v, struct config_sidecar *sc)
{
	if (v->type != YN_MAP)
		return bad(r, v, "limits: expected a mapping of memory_mb, pids, cpu");
	for (size_t i = 0; i < v->n; i += 2) {
		const char *k = scalar(r, v->kids[i], "limits");
		char name[48];
		if (k == NULL)
			return -1;
		snprintf(name, sizeof(name), "limits.%s", k);
		const struct config_key *f = config_field_named(sidecar_fields, name);
		if (f == NULL || strchr(k, '.') != NULL)
			return bad(r, v->kids[i],
				   "limits: unknown field %.40s (memory_mb, pids, cpu)", k);
		if (read_scalar(r, v->kids[i + 1], f, sc) == -1)
			return -1;
	}
	return 0;
}

/* host: a numeric IP address (the parent binds and probes it as written). */
static int
host_ok(const char *s)
{
	unsigned char a[16];
	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* One field `k` with value `v` of a sidecar. */
static int
read_field(struct rd *r, const struct ynode *kn, const struct ynode *v, struct config_sidecar *sc)
{
	const char *k = kn->text;
	const struct config_key *f;

	if (strcmp(k, "limits") == 0)
		return read_limits(r, v, sc);
	f = config_field_named(sidecar_fields, k);
	if (f == NULL || strchr(k, '.') != NULL)
		return bad(r, kn, "unknown field %.40s", k);
	if (f->kind == CFG_LIST)
		return read_command(r, v, sc);
	if (f->kind == CFG_MAP)
		return read_env(r, v, sc);
	return read_scalar(r, v, f, sc);
}

/* The checks of one sidecar once its fields are read, and of it against those before. */
static int
check_sidecar(struct rd *r, const struct ynode *m, struct config_sidecars *s, size_t i)
{
	struct config_sidecar *sc = &s->v[i];
	char why[256];

	if (sc->name == NULL || sc->name[0] == '\0' ||
	    strspn(sc->name, NAME_CHARS) != strlen(sc->name) || strlen(sc->name) > 32)
		return bad(r, m, "name is required: 1 to 32 letters, digits, _ and -");
	if (sc->command.n == 0)
		return bad(r, m, "command is required (a list of arguments)");
	if (sc->url_env_var == NULL) {
		sc->url_env_var = xasprintf("%s_URL", sc->name);
		for (char *p = sc->url_env_var; *p; p++)
			*p = *p == '-' ? '_' : *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
	}
	if (!env_name_valid(sc->url_env_var) || r->env_name_ok(sc->url_env_var, why, sizeof(why)))
		return bad(r, m, "url_env_var %.60s is not a name kernels may be given",
			   sc->url_env_var);
	if (!host_ok(sc->host))
		return bad(r, m, "host %.60s is not a numeric IP address", sc->host);
	if (sc->health_path[0] != '/' || strpbrk(sc->health_path, " \r\n\t") != NULL)
		return bad(r, m, "health_path must start with / and hold no space");
	if (!sc->use_env_python && sc->command.v[0][0] != '/')
		return bad(r, m, "command[0] must be an absolute path when use_env_python is "
				 "false");
	for (size_t j = 0; j < i; j++) {
		const struct config_sidecar *o = &s->v[j];
		if (strcmp(o->name, sc->name) == 0)
			return bad(r, m, "name %s is already used by item %zu", sc->name, j + 1);
		if (strcmp(o->url_env_var, sc->url_env_var) == 0)
			return bad(r, m, "url_env_var %s is already used by item %zu",
				   sc->url_env_var, j + 1);
		if (sc->port_configured != 0 && o->port_configured == sc->port_configured)
			return bad(r, m, "port %d is already used by item %zu", sc->port_configured,
				   j + 1);
	}
	sc->port = sc->port_configured;
	return 0;
}

static int
read_one(struct rd *r, const struct ynode *m, struct config_sidecars *s)
{
	struct config_sidecar *sc = &s->v[s->n - 1];
	char why[256];

	config_field_defaults(NULL, sc, sidecar_fields, "sidecars");
	if (m->type != YN_MAP)
		return bad(r, m, "expected a mapping of fields");
	for (size_t i = 0; i < m->n; i += 2) {
		const struct ynode *kn = m->kids[i];
		if (config_field_key_ok(m, i, why, sizeof(why)) == -1)
			return bad(r, kn, "%s", why);
		if (read_field(r, kn, m->kids[i + 1], sc) == -1)
			return -1;
	}
	return check_sidecar(r, m, s, s->n - 1);
}

int
sidecars_read_node(struct config_sidecars *s, const char *file, const struct ynode *list,
		   int (*env_name_ok)(const char *name, char *why, size_t why_len), char *why,
		   size_t why_len)
{
	struct rd r = {.file = file, .why = why, .why_len = why_len, .env_name_ok = env_name_ok};

	sidecars_free(s);
	snprintf(r.label, sizeof(r.label), "sidecars");
	if (list->type == YN_SCALAR && list->plain && ynode_is_null_word(list->text))
		return 0;
	if (list->type != YN_SEQ)
		return bad(&r, list, "expected a list of sidecars");
	if (list->n > SIDECARS_MAX)
		return bad(&r, list, "at most %d sidecars", SIDECARS_MAX);
	s->v = xcalloc(list->n + 1, sizeof(*s->v));
	for (size_t i = 0; i < list->n; i++) {
		snprintf(r.label, sizeof(r.label), "sidecars item %zu", i + 1);
		s->n++;
		if (read_one(&r, list->kids[i], s) == -1) {
			sidecars_free(s);
			return -1;
		}
	}
	return 0;
}

static void
strv_free_n(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void
sidecars_free(struct config_sidecars *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct config_sidecar *sc = &s->v[i];
		free(sc->name);
		strv_free_n(sc->command.v, sc->command.n);
		free(sc->url_env_var);
		free(sc->host);
		free(sc->health_path);
		free(sc->socket_path);
		strv_free_n(sc->env.keys, sc->env.n);
		strv_free_n(sc->env.values, sc->env.n);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int
sidecar_differs(const struct config_sidecar *a, const struct config_sidecar *b)
{
	for (const struct config_key *f = sidecar_fields; f->name != NULL; f++)
		if (config_field_differs(f, a, b))
			return 1;
	return 0;
}

int
sidecar_fields_changed(const struct config_sidecar *a, const struct config_sidecar *b, int scope,
		       const char *prefix)
{
	int n = 0;

	for (const struct config_key *f = sidecar_fields; f->name != NULL; f++)
		n += (int)f->scope == scope &&
		     (prefix == NULL || strncmp(f->name, prefix, strlen(prefix)) == 0) &&
		     config_field_differs(f, a, b);
	return n;
}

void
sidecar_field_names(int scope, char *names, size_t len)
{
	const struct config_key *f, *last = NULL;
	size_t at = 0;

	for (f = sidecar_fields; f->name != NULL; f++)
		if ((int)f->scope == scope)
			last = f;
	names[0] = '\0';
	for (f = sidecar_fields; f->name != NULL && at < len; f++) {
		if ((int)f->scope != scope)
			continue;
		const char *sep = at == 0 ? "" : f == last ? " or " : ", ";
		int w = snprintf(names + at, len - at, "%s%s", sep, f->name);
		at += w > 0 ? (size_t)w : 0;
	}
}

void
sidecar_take_settings(struct config_sidecar *a, struct config_sidecar *b)
{
	unsigned char tmp[sizeof(*a)];

	for (const struct config_key *f = sidecar_fields; f->name != NULL; f++) {
		if (f->scope != RELOAD_SIDECARS)
			continue;
		memcpy(tmp, (char *)a + f->offset, f->size);
		memcpy((char *)a + f->offset, (char *)b + f->offset, f->size);
		memcpy((char *)b + f->offset, tmp, f->size);
	}
}
