/*
 * sigflags.h - the signals a codeexecd process acts on (TERM and INT,
 * CHLD, HUP, USR1), caught into flags and a self-pipe that wakes its
 * poll() loop. Each process (the parent, the front) installs them for
 * itself; the handlers do nothing else.
 */
#ifndef SUPERVISOR_SIGFLAGS_H
#define SUPERVISOR_SIGFLAGS_H

#include <signal.h>

enum sigflag { SIGFLAG_TERM, SIGFLAG_CHLD, SIGFLAG_HUP, SIGFLAG_USR1, SIGFLAG_N };

/*
 * Install the handlers with a new pipe (fatal if it cannot be made) and
 * unblock their signals; SIGPIPE ignored. A forked child that closed the
 * inherited pipe blocks the signals until it calls this.
 */
void sigflags_install(void);
/* The pipe's read end, readable once a signal came. */
int sigflags_fd(void);
/* Empty the pipe (before reading the flags). */
void sigflags_drain(void);
/* Whether `f` was raised since the last take; clears it. */
int sigflags_take(enum sigflag f);
/* Whether TERM or INT came (not cleared). */
int sigflags_term(void);

#endif
