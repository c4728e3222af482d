/*
 * onclose.h - nothing lost at the end: when a session ends (closed, idle
 * expiry, shutdown), the files of its outputs/ are published to every
 * publisher marked on_close before its directory is removed, and the log
 * names what went where.
 */
#ifndef SUPERVISOR_ONCLOSE_H
#define SUPERVISOR_ONCLOSE_H

struct config;
struct session;

/* Remember the configuration (borrowed) and hook into session_close. */
void onclose_init(const struct config *cfg);

#endif
