/*
 * config_int.h - what config.c, config_check.c and config_keys.c share;
 * nothing outside those files includes it.
 */
#ifndef COMMON_CONFIG_INT_H
#define COMMON_CONFIG_INT_H

#include <stddef.h>

#include "config.h"

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
#define WHY_LEN 256

/*
 * The value checks (config_check.c), each a config_check_fn: 0, or -1
 * with the reason in why.
 */
int check_name(struct config *c, const char *v, char *why, size_t why_len);
int check_nonempty(struct config *c, const char *v, char *why, size_t why_len);
int check_node_name(struct config *c, const char *v, char *why, size_t why_len);
int check_absolute(struct config *c, const char *v, char *why, size_t why_len);
int check_python(struct config *c, const char *v, char *why, size_t why_len);
int check_facility(struct config *c, const char *v, char *why, size_t why_len);
int check_uid_range(struct config *c, const char *v, char *why, size_t why_len);
int check_listen(struct config *c, const char *v, char *why, size_t why_len);
int check_metrics_listen(struct config *c, const char *v, char *why, size_t why_len);
int check_origin(struct config *c, const char *v, char *why, size_t why_len);
int check_command(struct config *c, const char *v, char *why, size_t why_len);
int check_mime(struct config *c, const char *v, char *why, size_t why_len);
int check_backend(struct config *c, const char *v, char *why, size_t why_len);
int check_module_name(struct config *c, const char *v, char *why, size_t why_len);
int check_env_name(struct config *c, const char *v, char *why, size_t why_len);
int check_wheelhouse(struct config *c, const char *v, char *why, size_t why_len);
int check_conda_exe(struct config *c, const char *v, char *why, size_t why_len);
int check_source(struct config *c, const char *v, char *why, size_t why_len);
int check_destination(struct config *c, const char *v, char *why, size_t why_len);
int check_checksum(struct config *c, const char *v, char *why, size_t why_len);
int check_entra_id(struct config *c, const char *v, char *why, size_t why_len);
int check_auth_url(struct config *c, const char *v, char *why, size_t why_len);
int check_auth_https(struct config *c, const char *v, char *why, size_t why_len);
int check_scope(struct config *c, const char *v, char *why, size_t why_len);
int check_jwt_alg(struct config *c, const char *v, char *why, size_t why_len);
int check_absolute_or_empty(struct config *c, const char *v, char *why, size_t why_len);
int check_pub_type(struct config *c, const char *v, char *why, size_t why_len);
int check_account_url(struct config *c, const char *v, char *why, size_t why_len);
int check_prefix(struct config *c, const char *v, char *why, size_t why_len);
int check_endpoint(struct config *c, const char *v, char *why, size_t why_len);
int check_preprocess_command(struct config *c, const char *v, char *why, size_t why_len);
int check_index(struct config *c, const char *v, char *why, size_t why_len);
int check_egress_allow(struct config *c, const char *v, char *why, size_t why_len);
int check_egress_deny(struct config *c, const char *v, char *why, size_t why_len);
/* config_egress.c: egress.inject's fields and records, and its hosts against egress.allow. */
int check_inject_host(struct config *c, const char *v, char *why, size_t why_len);
int check_inject_header(struct config *c, const char *v, char *why, size_t why_len);
int check_inject(struct config *c, size_t i, char *why, size_t why_len);
const char *config_egress_finish(const struct config *c, char *why, size_t why_len);
int check_api_version(struct config *c, const char *v, char *why, size_t why_len);
/* The checks of record i against those before it (CFG_RECORDS). */
int check_asset_unique(struct config *c, size_t i, char *why, size_t why_len);
int check_publisher(struct config *c, size_t i, char *why, size_t why_len);
int check_upstream_url(struct config *c, const char *v, char *why, size_t why_len);
int check_upstream(struct config *c, size_t i, char *why, size_t why_len);
/* The key table (config_keys.c), and how many keys it holds before its NULL. */
extern const struct config_key config_key_table[];
extern const size_t config_key_count;

/* check_env_name for a reader without a struct config (sidecar_config.c). */
int env_name_ok(const char *v, char *why, size_t why_len);

#endif
