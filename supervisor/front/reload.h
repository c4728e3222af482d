/*
 * reload.h - SIGHUP: re-read the configuration into the running daemon.
 *
 * Settings that can change live are moved into the running configuration
 * under both pool_lock() and config_lock; settings that cannot (listen
 * address, environment, directories) keep their running values and are
 * reported as needing a restart. A file with errors changes nothing.
 *
 * config_lock guards the live settings. Since the writer holds pool_lock
 * as well, code under pool_lock reads them as they are; code that does not
 * hold pool_lock (the HTTP front door) takes config_read_lock() instead,
 * and so never waits for pool_lock to read a setting.
 */
#ifndef SUPERVISOR_RELOAD_H
#define SUPERVISOR_RELOAD_H

struct config;

/* Re-read running->file into `running`. Returns 0, or -1 if rejected. */
int reload_config(struct config *running);

/* Hold config_lock for reading (never while taking pool_lock). */
void config_read_lock(void);
void config_read_unlock(void);

#endif
