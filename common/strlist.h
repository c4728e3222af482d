/*
 * strlist.h - the list and mapping values of the configuration: what a
 * CFG_LIST and a CFG_MAP field hold, in struct config and in the records
 * of sidecar_config.h alike, so that one field table row can read,
 * compare and move either.
 */
#ifndef COMMON_STRLIST_H
#define COMMON_STRLIST_H

#include <stddef.h>

struct strlist {
	char **v;
	size_t n;
};

/* Ordered name -> value pairs. */
struct strmap {
	char **keys;
	char **values;
	size_t n;
};

#endif
