/*
 * assets.h - files provisioned into asset_cache_dir at start-up (seed 000,
 * "Assets").
 *
 * Each asset is fetched (libcurl for https:// and loopback http://, a plain
 * read for file:// and absolute paths) into a temporary file beside its
 * destination, hashed with SHA-256 while it streams, and renamed into place
 * only when the checksum matches. A file already in place with the right
 * checksum is not fetched again. Destinations never leave the cache: the
 * configuration refuses absolute paths and "..", and here no part of the
 * path may be a symbolic link.
 */
#ifndef SUPERVISOR_ASSETS_H
#define SUPERVISOR_ASSETS_H

#include <stddef.h>

struct config;

/*
 * Provision every asset when auto_provision is true or `force` is set
 * (--warm). Returns 0, or -1 with the asset's name and the reason in err.
 */
int assets_provision(const struct config *cfg, int force, char *why, size_t why_len);

#endif
