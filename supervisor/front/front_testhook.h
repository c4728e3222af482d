/*
 * front_testhook.h - what the system tests make a front do that an honest
 * one never would, to see the filter and the parent answer it
 * (tests/system/348-front-filter.sh, 350-privsep-front.sh). Only when the
 * daemon was started with CODEEXECD_TEST_FRONT_FILTER set, and only on a
 * request that carries the header X-Codeexecd-Test:
 *
 *   fork   the front calls fork(), off its seccomp allow-list
 *   lie    the front sends the parent requests a subverted front would:
 *          ids it was never given, a pid that is not a claimed kernel,
 *          the directory of a live worker, another network mode, records
 *          of another version, of the parent's own range, with a
 *          descriptor attached, and garbage
 *
 * Does nothing otherwise.
 */
#ifndef SUPERVISOR_FRONT_TESTHOOK_H
#define SUPERVISOR_FRONT_TESTHOOK_H

/* `what`: the header's value, or NULL when the request has none. */
void front_test_hook(const char *what);

#endif
