/*
 * config_check.c - the value checks of the key table (config_keys.c). Each
 * takes the value as text and returns 0, or -1 with the reason in `why`;
 * a few also store what they parse (listen, kernel_uid_range).
 */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth_config.h"
#include "authority.h"
#include "config.h"
#include "config_int.h"
#include "egress_rules.h"
#include "err.h"
#include "log.h"
#include "shown.h"
#include "xmalloc.h"

/* The longest tool name, NAME_parallel_execute, must fit MCP's 64. */
#define NAME_MAX_LEN 47

int
check_name(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	size_t len = strlen(v);

	if (len == 0)
		return err_set(why, why_len, "must not be empty");
	if (strspn(v, NAME_CHARS) != len)
		return err_set(why, why_len,
			       "%s may hold only letters, digits, _ and -, "
			       "since it becomes part of the MCP tool names",
			       shown(v, sh));
	if (len > NAME_MAX_LEN)
		return err_set(why, why_len, "is %zu characters long; at most %d are allowed", len,
			       NAME_MAX_LEN);
	return 0;
}

int
check_node_name(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	size_t len = strlen(v);

	if (strspn(v, NAME_CHARS) != len)
		return err_set(why, why_len,
			       "%s may hold only letters, digits, _ and -, since it starts "
			       "every handle this node mints, before a dot",
			       shown(v, sh));
	if (len > CONFIG_NODE_NAME_MAX)
		return err_set(why, why_len, "is %zu characters long; at most %d are allowed", len,
			       CONFIG_NODE_NAME_MAX);
	return 0;
}

int
check_nonempty(struct config *c, const char *v, char *why, size_t why_len)
{
	return v[0] == '\0' ? err_set(why, why_len, "must not be empty") : 0;
}

int
check_absolute(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	if (v[0] != '/')
		return err_set(why, why_len, "%s is not an absolute path", shown(v, sh));
	return 0;
}

int
check_python(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	if (v[0] == '\0')
		return err_set(why, why_len, "must not be empty");
	if (strchr(v, '/') != NULL && v[0] != '/')
		return err_set(why, why_len,
			       "%s must be a command name found in PATH or an absolute path",
			       shown(v, sh));
	return 0;
}

int
check_facility(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	if (log_facility_from_name(v) < 0)
		return err_set(why, why_len,
			       "unknown syslog facility %s (daemon, user, auth or local0..local7)",
			       shown(v, sh));
	return 0;
}

/* Parse "host:port" or "[v6addr]:port" and store both parts. */
/* kernel_uid_range: "START-END", both above 0, START <= END; "" for none. */
int
check_uid_range(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	unsigned long first, last;
	char *end;

	if (v[0] == '\0') {
		c->kernel_uid_first = c->kernel_uid_last = 0;
		return 0;
	}
	errno = 0;
	first = strtoul(v, &end, 10);
	if (end == v || *end != '-' || !isdigit((unsigned char)end[1]))
		return err_set(why, why_len, "%s: expected START-END, as 200000-200999",
			       shown(v, sh));
	const char *second = end + 1;
	last = strtoul(second, &end, 10);
	if (*end != '\0' || errno != 0 || first == 0 || last < first || last > 4294967294UL)
		return err_set(why, why_len,
			       "%s: expected START-END with 0 < START <= END < 4294967295",
			       shown(v, sh));
	c->kernel_uid_first = (unsigned)first;
	c->kernel_uid_last = (unsigned)last;
	return 0;
}

/* A listen address, HOST:PORT or [V6]:PORT, into *host (replaced) and *port. */
static int
parse_listen(const char *v, char **host, int *port_out, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	struct authority a;
	char bad[ERR_LEN];

	if (v[0] == '[') {
		const char *end = strchr(v, ']');
		if (end == NULL || end[1] != ':')
			return err_set(why, why_len, "%s: expected [IPV6-ADDRESS]:PORT",
				       shown(v, sh));
	} else {
		const char *colon = strrchr(v, ':');
		if (colon == NULL)
			return err_set(why, why_len, "%s: expected HOST:PORT", shown(v, sh));
		if (colon == v)
			return err_set(why, why_len, "%s: the host is empty", shown(v, sh));
		if (memchr(v, ':', (size_t)(colon - v)) != NULL)
			return err_set(why, why_len,
				       "%s: write an IPv6 address in brackets, as [::1]:8000",
				       shown(v, sh));
	}
	const char *port = strrchr(v, ':') + 1;
	size_t plen = strlen(port);
	if (plen == 0 || plen > 5 || strspn(port, "0123456789") != plen || atol(port) > 65535)
		return err_set(why, why_len, "the port of %s must be a number from 0 to 65535",
			       shown(v, sh));
	/* The one authority parser: what it refuses, nothing else accepts. */
	if (authority_parse(v, &a, bad, sizeof(bad)) == -1) {
		if (v[0] == '[')
			return err_set(why, why_len, "%s: bad IPv6 address", shown(v, sh));
		return err_set(why, why_len, "%s: bad host name or address (%s)", shown(v, sh),
			       bad);
	}
	free(*host);
	*host = xstrdup(a.host);
	*port_out = a.port;
	return 0;
}

int
check_listen(struct config *c, const char *v, char *why, size_t why_len)
{
	return parse_listen(v, &c->listen_host, &c->listen_port, why, why_len);
}

/* metrics_listen: "" serves /metrics beside /mcp; else its own address. */
int
check_metrics_listen(struct config *c, const char *v, char *why, size_t why_len)
{
	if (v[0] == '\0') {
		free(c->metrics_listen_host);
		c->metrics_listen_host = NULL;
		c->metrics_listen_port = 0;
		return 0;
	}
	return parse_listen(v, &c->metrics_listen_host, &c->metrics_listen_port, why, why_len);
}

/* An origin as browsers send it: scheme://host[:port], nothing more. */
int
check_origin(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	struct origin o;

	if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		return err_set(why, why_len,
			       "%s is not an origin: it must start with http:// or https://",
			       shown(v, sh));
	if (origin_parse(v, &o, NULL, 0) == -1)
		return err_set(why, why_len,
			       "%s is not an origin: expected scheme://host[:port], "
			       "with no path or trailing /",
			       shown(v, sh));
	return 0;
}

int
check_command(struct config *c, const char *v, char *why, size_t why_len)
{
	return v[0] == '\0' ? err_set(why, why_len, "an empty command") : 0;
}

/* RFC 6838's restricted-name characters, in lower case as Jupyter sends types. */
#define MIME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789!#$&^_.+-"

/* An allow_mime item: TYPE/SUBTYPE in lower case, not listed before. */
int
check_mime(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	size_t type = strspn(v, MIME_CHARS);

	if (type == 0 || type > 127 || v[type] != '/' || strlen(v + type + 1) == 0 ||
	    strlen(v + type + 1) > 127 || strspn(v + type + 1, MIME_CHARS) != strlen(v + type + 1))
		return err_set(why, why_len,
			       "%s is not a MIME type: expected TYPE/SUBTYPE in lower case, "
			       "as image/png",
			       shown(v, sh));
	for (size_t i = 0; i < c->allow_mime.n; i++)
		if (strcmp(c->allow_mime.v[i], v) == 0)
			return err_set(why, why_len, "%s is listed twice", shown(v, sh));
	return 0;
}

/* matplotlib_backend: none, module://DOTTED.NAME or a built-in name (agg). */
int
check_backend(struct config *c, const char *v, char *why, size_t why_len)
{
	static const char ident[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
	char sh[SHOWN_LEN];
	const char *mod = strncmp(v, "module://", 9) == 0 ? v + 9 : NULL;

	if (mod == NULL && v[0] != '\0' && strspn(v, ident) == strlen(v))
		return 0;
	/* Dotted identifiers: no empty part, none starting with a digit. */
	for (const char *p = mod; p != NULL;) {
		size_t len = strspn(p, ident);
		if (len == 0 || isdigit((unsigned char)p[0]) || (p[len] != '.' && p[len] != '\0'))
			break;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
	return err_set(why, why_len,
		       "%s is not a matplotlib backend: expected none, module://MODULE "
		       "(a dotted Python module name) or a built-in backend name such as agg",
		       shown(v, sh));
}

#define CONTROLLED "codeexecd sets it for every kernel"
#define INJECTS "it injects code before kernel isolation applies"

/* A dotted Python module name (pool.preload): what `import NAME` takes. */
int
check_module_name(struct config *c, const char *v, char *why, size_t why_len)
{
	static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";
	char sh[SHOWN_LEN];
	const char *p = v;

	(void)c;
	/* Each identifier starts with a letter or _; dots join them. */
	while (*p != '\0' && strchr(letters, *p) != NULL) {
		p += strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (*p == '\0')
			return 0;
		if (*p++ != '.')
			break;
	}
	return err_set(why, why_len, "%s is not a Python module name (identifiers joined by dots)",
		       shown(v, sh));
}

/* kernel_environment names refused, as seed 000 lists them, with the reason. */
static const struct {
	const char *name;
	const char *why;
} env_rejected[] = {
	{"PATH", CONTROLLED},
	{"MCP_ASSET_CACHE_DIR", CONTROLLED},
	{"USER_IDENTITY", CONTROLLED},
	{"VIRTUAL_ENV", CONTROLLED},
	{"CONDA_PREFIX", CONTROLLED},
	{"CONDA_DEFAULT_ENV", CONTROLLED},
	{"IPYTHONDIR", CONTROLLED},
	{"JUPYTER_CONFIG_DIR", CONTROLLED},
	{"JUPYTER_DATA_DIR", CONTROLLED},
	{"JUPYTER_RUNTIME_DIR", CONTROLLED},
	{"JUPYTER_PATH", CONTROLLED},
	{"JUPYTER_CONFIG_PATH", CONTROLLED},
	{"PYTHONPATH", INJECTS},
	{"PYTHONHOME", INJECTS},
	{"PYTHONSTARTUP", INJECTS},
	{"PYTHONUSERBASE", INJECTS},
	{"PYTHONNOUSERSITE", INJECTS},
	{"LD_PRELOAD", INJECTS},
	{"LD_AUDIT", INJECTS},
	{"DYLD_INSERT_LIBRARIES", INJECTS},
	{"SIDECAR_HOST", CONTROLLED},
	{"SIDECAR_PORT", CONTROLLED},
};

int
check_env_name(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	size_t len = strlen(v);

	if (len == 0 || (v[0] >= '0' && v[0] <= '9') ||
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != len)
		return err_set(why, why_len,
			       "%s is not a valid environment variable name "
			       "(letters, digits and _, not starting with a digit)",
			       shown(v, sh));
	for (size_t i = 0; i < sizeof(env_rejected) / sizeof(env_rejected[0]); i++)
		if (strcmp(v, env_rejected[i].name) == 0)
			return err_set(why, why_len, "%s is rejected: %s", v, env_rejected[i].why);
	return 0;
}

/* check_env_name for a reader without a struct config (sidecar_config.c). */
int
env_name_ok(const char *v, char *why, size_t why_len)
{
	return check_env_name(NULL, v, why, why_len);
}

/* wheelhouse: empty, or an absolute path (kernels of any cwd read it). */
int
check_wheelhouse(struct config *c, const char *v, char *why, size_t why_len)
{
	return v[0] == '\0' ? 0 : check_absolute(c, v, why, why_len);
}

/* conda_executable: empty, a command name or an absolute path. */
int
check_conda_exe(struct config *c, const char *v, char *why, size_t why_len)
{
	return v[0] == '\0' ? 0 : check_python(c, v, why, why_len);
}

/* Whether the authority `host[:port]` of an http:// URL names loopback. */
static int
is_loopback_authority(const char *a, size_t len)
{
	char text[320];
	struct authority auth;

	if (len >= sizeof(text))
		return 0;
	memcpy(text, a, len);
	text[len] = '\0';
	return authority_parse(text, &auth, NULL, 0) == 0 && authority_is_loopback(&auth);
}

/* An asset source: https://, http:// to loopback, file:///PATH or /PATH. */
int
check_source(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	if (strncmp(v, "https://", 8) == 0) {
		if (strcspn(v + 8, "/?#") == 0)
			return err_set(why, why_len, "%s has no host", shown(v, sh));
		return 0;
	}
	if (strncmp(v, "http://", 7) == 0) {
		if (!is_loopback_authority(v + 7, strcspn(v + 7, "/?#")))
			return err_set(why, why_len,
				       "%s: plain http:// is allowed only to a loopback address "
				       "(127.0.0.1, [::1], localhost); use https://",
				       shown(v, sh));
		return 0;
	}
	if (strncmp(v, "file://", 7) == 0) {
		const char *p = v + 7;
		if (strncmp(p, "localhost/", 10) == 0)
			p += 9;
		if (p[0] != '/')
			return err_set(why, why_len,
				       "%s: a file URL must be file:///ABSOLUTE/PATH",
				       shown(v, sh));
		return 0;
	}
	if (v[0] == '/')
		return 0;
	return err_set(why, why_len,
		       "%s must be an https:// URL, an http:// URL to loopback, a file:// URL "
		       "or an absolute path",
		       shown(v, sh));
}

/* An asset destination: a relative path that stays inside the cache. */
int
check_destination(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	if (v[0] == '\0')
		return err_set(why, why_len, "must not be empty");
	if (v[0] == '/')
		return err_set(why, why_len,
			       "%s is absolute: it must be relative to asset_cache_dir",
			       shown(v, sh));
	for (const char *p = v;;) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && strncmp(p, "..", 2) == 0))
			return err_set(why, why_len,
				       "%s: every part of the path must be a name "
				       "(no \"..\", \".\", empty part or trailing /)",
				       shown(v, sh));
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

/* A sha256 checksum: 64 hexadecimal digits, maybe after "sha256:". */
int
check_checksum(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	const char *hex = strncmp(v, "sha256:", 7) == 0 ? v + 7 : v;

	if (strlen(hex) != 64 || strspn(hex, "0123456789abcdefABCDEF") != 64)
		return err_set(why, why_len, "%s is not a sha256 checksum (64 hexadecimal digits)",
			       shown(v, sh));
	return 0;
}

/* Two assets may not share a name or a destination. */
int
check_asset_unique(struct config *c, size_t i, char *why, size_t why_len)
{
	const struct config_asset *a = config_asset_at(c, i);

	for (size_t j = 0; j < i; j++) {
		const struct config_asset *o = config_asset_at(c, j);
		if (strcmp(a->name, o->name) == 0)
			return err_set(why, why_len, "name %s is already used by item %zu",
				       a->name, j + 1);
		if (strcmp(a->destination, o->destination) == 0)
			return err_set(why, why_len, "destination %s is already used by item %zu",
				       a->destination, j + 1);
	}
	return 0;
}

/* The authentication keys' value checks (auth_config.c holds the rest). */
int
check_entra_id(struct config *c, const char *v, char *why, size_t why_len)
{
	return auth_check_entra_id(v, why, why_len);
}

int
check_auth_url(struct config *c, const char *v, char *why, size_t why_len)
{
	return auth_check_url(v, 0, why, why_len);
}

int
check_auth_https(struct config *c, const char *v, char *why, size_t why_len)
{
	return auth_check_url(v, 1, why, why_len);
}

int
check_scope(struct config *c, const char *v, char *why, size_t why_len)
{
	return auth_check_scope(v, why, why_len);
}

int
check_jwt_alg(struct config *c, const char *v, char *why, size_t why_len)
{
	return auth_check_alg(v, why, why_len);
}

int
check_absolute_or_empty(struct config *c, const char *v, char *why, size_t why_len)
{
	return v[0] == '\0' ? 0 : check_absolute(c, v, why, why_len);
}

/* One rule of egress.allow or egress.deny, as the proxy will read it. */
static int
check_egress_rule(int deny, const char *v, char *why, size_t why_len)
{
	struct egress_rules r = {0};
	int rc = egress_rules_add(&r, deny, v, why, why_len);

	egress_rules_free(&r);
	return rc;
}

int
check_egress_allow(struct config *c, const char *v, char *why, size_t why_len)
{
	(void)c;
	return check_egress_rule(0, v, why, why_len);
}

int
check_egress_deny(struct config *c, const char *v, char *why, size_t why_len)
{
	(void)c;
	return check_egress_rule(1, v, why, why_len);
}

/* ---- publishers (issue 16) ---- */

/* publishers' type. */
int
check_pub_type(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (strcmp(v, "local") == 0 || strcmp(v, "azure_blob") == 0)
		return 0;
	return err_set(why, why_len, "%s: expected local or azure_blob", shown(v, sh));
}

/*
 * A URL of a service the daemon calls: https://, or http:// to a loopback
 * address, with a host, none of the characters of `refused`; else the
 * error says it expected `expected`.
 */
static int
https_or_loopback(const char *v, const char *refused, const char *expected, char *why,
		  size_t why_len)
{
	char sh[SHOWN_LEN];
	const char *host = strncmp(v, "https://", 8) == 0  ? v + 8
			   : strncmp(v, "http://", 7) == 0 ? v + 7
							   : NULL;

	if (host == NULL || host[0] == '\0' || host[0] == '/' || strpbrk(v, refused) != NULL)
		return err_set(why, why_len, "%s: expected %s", shown(v, sh), expected);
	if (host == v + 7 && !is_loopback_authority(host, strcspn(host, "/")))
		return err_set(why, why_len,
			       "%s: plain http:// is allowed only to a loopback address; use https://",
			       shown(v, sh));
	return 0;
}

/* publishers' account_url: https://, or http:// to loopback (Azurite); a path is allowed. */
int
check_account_url(struct config *c, const char *v, char *why, size_t why_len)
{
	(void)c;
	if (v[0] == '\0')
		return 0;
	return https_or_loopback(v, "?#", "https://ACCOUNT.blob.core.windows.net", why, why_len);
}

/* publishers' prefix: relative, no "..", only the known placeholders. */
int
check_prefix(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];

	(void)c;
	if (v[0] == '/' || strstr(v, "..") != NULL)
		return err_set(why, why_len, "%s: must be relative, without ..", shown(v, sh));
	for (const char *p = strchr(v, '{'); p; p = strchr(p + 1, '{'))
		if (strncmp(p, "{identity}", 10) != 0 && strncmp(p, "{session}", 9) != 0 &&
		    strncmp(p, "{date}", 6) != 0)
			return err_set(why, why_len, "%s: the placeholders are {identity}, "
						     "{session} and {date}", shown(v, sh));
	return 0;
}

/* A publisher's fields agree with its type; names are unique. */
int
check_publisher(struct config *c, size_t i, char *why, size_t why_len)
{
	const struct config_publisher *p = config_publisher_at(c, i);

	for (size_t j = 0; j < i; j++)
		if (strcmp(p->name, config_publisher_at(c, j)->name) == 0)
			return err_set(why, why_len, "name %s is already used by item %zu",
				       p->name, j + 1);
	if (strspn(p->name, NAME_CHARS) != strlen(p->name))
		return err_set(why, why_len, "name may hold only letters, digits, _ and -");
	if (strcmp(p->type, "local") == 0) {
		if (p->base_dir[0] != '/')
			return err_set(why, why_len, "type local needs base_dir, an absolute path");
		return 0;
	}
	if (p->account_url[0] == '\0' || p->container[0] == '\0')
		return err_set(why, why_len, "type azure_blob needs account_url and container");
	int creds = (p->sas_token_file[0] != '\0') + (p->account_key_file[0] != '\0') +
		    (p->managed_identity != 0);
	if (creds != 1)
		return err_set(why, why_len, "type azure_blob needs exactly one of sas_token_file, "
					     "account_key_file and managed_identity: true");
	return 0;
}

/* azure_ai_search.endpoint: empty, https://HOST[:PORT], or http:// to loopback. */
int
check_endpoint(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	const char *host = strncmp(v, "https://", 8) == 0  ? v + 8
			   : strncmp(v, "http://", 7) == 0 ? v + 7
							   : NULL;

	if (v[0] == '\0')
		return 0;
	if (host == NULL || host[0] == '\0' || host[strcspn(host, "/?#")] != '\0')
		return err_set(why, why_len,
			       "%s: expected https://HOST[:PORT], with no path, as "
			       "https://NAME.search.windows.net",
			       shown(v, sh));
	if (host == v + 7 && !is_loopback_authority(host, strlen(host)))
		return err_set(why, why_len,
			       "%s: plain http:// is allowed only to a loopback address; use https://",
			       shown(v, sh));
	return 0;
}

/* preprocess_command: an absolute path to an executable file, or "". */
int
check_preprocess_command(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	struct stat st;

	(void)c;
	if (v[0] == '\0')
		return 0;
	if (v[0] != '/')
		return err_set(why, why_len, "%s is not an absolute path", shown(v, sh));
	if (stat(v, &st) == -1)
		return err_set(why, why_len, "%s: %s", shown(v, sh), strerror(errno));
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return err_set(why, why_len, "%s is not an executable file", shown(v, sh));
	return 0;
}

/* azure_ai_search.index: Azure's index names, lower-case letters, digits and -. */
int
check_index(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	size_t len = strlen(v);

	if (len == 0)
		return 0;
	if (len < 2 || len > 128 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-") != len ||
	    v[0] == '-' || v[len - 1] == '-')
		return err_set(why, why_len,
			       "%s is not an Azure AI Search index name (2 to 128 lower-case letters, "
			       "digits and -, not first or last)",
			       shown(v, sh));
	return 0;
}

/* azure_ai_search.api_version: as 2023-11-01 or 2024-05-01-preview. */
int
check_api_version(struct config *c, const char *v, char *why, size_t why_len)
{
	char sh[SHOWN_LEN];
	size_t len = strlen(v);

	if (len < 10 || len > 32 || strspn(v, "0123456789-abcdefghijklmnopqrstuvwxyz") != len)
		return err_set(why, why_len, "%s is not an API version, as 2023-11-01",
			       shown(v, sh));
	return 0;
}

/* ---- upstreams (code mode, issue 35) ---- */

/* upstreams' url: https://, or http:// to a loopback address. */
int
check_upstream_url(struct config *c, const char *v, char *why, size_t why_len)
{
	(void)c;
	return https_or_loopback(v, "#", "https://HOST/PATH", why, why_len);
}

/* Python's keywords: an upstream's name is a module name. */
static int
is_py_keyword(const char *s)
{
	static const char *const kw[] = {
		"False", "None", "True", "and", "as", "assert", "async", "await", "break",
		"class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
		"from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
		"pass", "raise", "return", "try", "while", "with", "yield", NULL};
	for (size_t i = 0; kw[i]; i++)
		if (strcmp(s, kw[i]) == 0)
			return 1;
	return 0;
}

/* An upstream's name is a Python identifier of ours and unique. */
int
check_upstream(struct config *c, size_t i, char *why, size_t why_len)
{
	const struct config_upstream *u = config_upstream_at(c, i);
	static const char lower[] = "abcdefghijklmnopqrstuvwxyz0123456789_";

	for (size_t j = 0; j < i; j++)
		if (strcmp(u->name, config_upstream_at(c, j)->name) == 0)
			return err_set(why, why_len, "name %s is already used by item %zu",
				       u->name, j + 1);
	if (strspn(u->name, lower) != strlen(u->name) || (u->name[0] >= '0' && u->name[0] <= '9') ||
	    u->name[0] == '_' || strlen(u->name) > 64 || is_py_keyword(u->name))
		return err_set(why, why_len,
			       "name %s: a Python module name of at most 64 lowercase letters, "
			       "digits and _, not starting with a digit or _, not a keyword",
			       u->name);
	return 0;
}
