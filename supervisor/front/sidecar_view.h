/*
 * sidecar_view.h - the front's view of the sidecars (sidecar.h runs them
 * in the parent): what the last SIDECAR_STATE of each said, for /health,
 * codeexecctl status and the degraded reason. Thread-safe.
 */
#ifndef SUPERVISOR_SIDECAR_VIEW_H
#define SUPERVISOR_SIDECAR_VIEW_H

#include <stddef.h>

#include "priv_msg.h"

struct config;
struct json_object;

/* Name the sidecars of cfg (borrowed for the front's lifetime), all starting. */
void sidecar_view_init(const struct config *cfg);
/* Take the parent's SIDECAR_STATE; one for no configured sidecar is logged and dropped. */
void sidecar_view_set(const struct priv_sidecar_state *st);
/* A new JSON array, one object per sidecar: name, state, pid, restarts,
 * uptime_s, rss_kb, port, url_env_var. Caller owns it. */
struct json_object *sidecar_view_json(void);
/* 1 with why[why_len] naming the sidecars not running, else 0. */
int sidecar_view_down(char *why, size_t why_len);

#endif
