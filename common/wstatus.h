/*
 * wstatus.h - how a child ended, for people: a waitpid status as
 * "exited with status 1" or "killed by signal 9 (SIGKILL)".
 */
#ifndef COMMON_WSTATUS_H
#define COMMON_WSTATUS_H

/* Describe wait status `status`. Caller owns the result. */
char *wstatus_text(int status);

#endif
