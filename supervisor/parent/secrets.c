/* secrets.c - see secrets.h. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "log.h"
#include "monitor.h"
#include "priv_msg.h"
#include "secret_file.h"
#include "secrets.h"

/*
 * The uids that must not own a secret: the kernels'. Not started as root,
 * the daemon shares its uid with its kernels whatever it does: nobody.
 */
static void
kernels_deny(const struct config *cfg, uid_t user, struct secret_deny *d)
{
	*d = (struct secret_deny){1, 0, NULL};
	if (geteuid() != 0)
		return;
	if (cfg->kernel_uid_first != 0)
		*d = (struct secret_deny){cfg->kernel_uid_first, cfg->kernel_uid_last, NULL};
	else if (user != (uid_t)-1)
		*d = (struct secret_deny){user, user, cfg->user};
}

/* Open `path` for `key` unless empty; it must fit a SECRET's printable field. */
static int
open_one(const char *key, const char *path, const struct secret_deny *d, char *why,
	 size_t why_len)
{
	if (path == NULL || path[0] == '\0')
		return 0;
	size_t n = strlen(path);
	for (size_t i = 0; i < n; i++)
		if (path[i] < 0x20 || path[i] > 0x7e)
			n = PRIV_REASON_MAX;
	if (n >= PRIV_REASON_MAX)
		return err_set(why, why_len, "%s %s: a secret file's path must be printable ASCII "
			       "of at most %d bytes (the front gets it by name)", key, path,
			       PRIV_REASON_MAX - 1);
	return secret_file_open(key, path, d, why, why_len);
}

int
secrets_open(const struct config *cfg, uid_t user, char *why, size_t why_len)
{
	struct secret_deny d;
	char key[160];

	kernels_deny(cfg, user, &d);
	if (cfg->auth_mode == AUTH_TOKENS &&
	    open_one("auth.tokens_file", cfg->auth_tokens_file, &d, why, why_len) == -1)
		return -1;
	if (open_one("azure_ai_search.api_key_file", cfg->azure_api_key_file, &d, why,
		     why_len) == -1)
		return -1;
	for (size_t i = 0; i < cfg->publishers.n; i++) {
		const struct config_publisher *p = config_publisher_at(cfg, i);
		snprintf(key, sizeof(key), "publisher %s: sas_token_file", p->name);
		if (open_one(key, p->sas_token_file, &d, why, why_len) == -1)
			return -1;
		snprintf(key, sizeof(key), "publisher %s: account_key_file", p->name);
		if (open_one(key, p->account_key_file, &d, why, why_len) == -1)
			return -1;
	}
	for (size_t i = 0; i < cfg->upstreams.n; i++) {
		const struct config_upstream *u = config_upstream_at(cfg, i);
		snprintf(key, sizeof(key), "upstream %s: token_file", u->name);
		if (open_one(key, u->token_file, &d, why, why_len) == -1)
			return -1;
	}
	/* After the front's: a path a front's key names too stays the front's. */
	for (size_t i = 0; i < cfg->egress_inject.n; i++) {
		const struct config_egress_inject *x = config_egress_inject_at(cfg, i);
		snprintf(key, sizeof(key), "egress.inject %s %s: secret_file", x->host, x->header);
		if (secret_file_open_parent(key, x->secret_file, &d, why, why_len) == -1)
			return -1;
	}
	return 0;
}

void
secrets_send(struct monitor *mon)
{
	struct priv_msg m = {.type = PRIV_SECRET};

	for (size_t i = 0; i < secret_file_count(); i++) {
		if (secret_file_parent_only(i))
			continue;
		snprintf(m.u.secret.path, sizeof(m.u.secret.path), "%s", secret_file_path(i));
		if (monitor_send(mon, &m, secret_file_fd(i)) == -1)
			return;
	}
	m.type = PRIV_SECRETS_SENT;
	monitor_send(mon, &m, -1);
}
