/*
 * reload.h - SIGHUP: re-read the configuration into the running daemon.
 *
 * Settings that can change live are moved into the running configuration
 * under pool_lock(); settings that cannot (listen address, environment,
 * directories) keep their running values and are reported as needing a
 * restart. A file with errors changes nothing.
 */
#ifndef SUPERVISOR_RELOAD_H
#define SUPERVISOR_RELOAD_H

struct config;

/* Re-read running->file into `running`. Returns 0, or -1 if rejected. */
int reload_config(struct config *running);

#endif
