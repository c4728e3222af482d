/*
 * clock.h - the worker's one notion of time: seconds on the monotonic
 * clock, so deadlines survive changes of the wall clock.
 */
#ifndef WORKER_CLOCK_H
#define WORKER_CLOCK_H

#include <time.h>

static inline double
clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
