/*
 * remover.h - remove directory trees on a thread of their own.
 *
 * A session's working directory may hold hundreds of thousands of files;
 * removing it takes seconds, and no lock holder (nor the main loop, which
 * reads every worker) may wait that long on the file system. Whoever is
 * done with a directory hands its path here and goes on.
 */
#ifndef SUPERVISOR_REMOVER_H
#define SUPERVISOR_REMOVER_H

/* Remove the tree at `path` (consumed: the remover frees it) soon. */
void remover_add(char *path);
/* Wait until every tree handed in so far is removed (shutdown). */
void remover_drain(void);

#endif
