/*
 * clock.h - the project's one notion of time for deadlines and durations:
 * seconds on the monotonic clock, so they survive changes of the wall
 * clock. Wall-clock times (for people) use time(2) where they are shown.
 */
#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

#include <time.h>

static inline double
clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
