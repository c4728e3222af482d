/* config.c - placeholder; the libyaml parser replaces this. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "xmalloc.h"

static const struct config_key keys[] = {{NULL, CFG_STRING, NULL, NULL}};

const struct config_key *
config_keys(void)
{
	return keys;
}

void
config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
}

int
config_load(const char *path, struct config *c, char *err, size_t errlen)
{
	config_defaults(c);
	snprintf(err, errlen, "%s: not implemented", path);
	return -1;
}

void
config_free(struct config *c)
{
	(void)c;
}

const char *
config_env_type_name(enum env_type t)
{
	return t == ENV_PIP ? "pip" : t == ENV_UV ? "uv" : "conda";
}
