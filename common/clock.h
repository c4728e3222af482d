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

/* The CLOCK_REALTIME time `seconds` from now: a deadline for
 * pthread_cond_timedwait, whose default clock that is. */
static inline struct timespec
clock_deadline(double seconds)
{
	struct timespec ts;
	long long ns;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns = (long long)ts.tv_nsec + (long long)((seconds - (double)(long long)seconds) * 1e9);
	ts.tv_sec += (time_t)(long long)seconds + (time_t)(ns / 1000000000LL);
	ts.tv_nsec = (long)(ns % 1000000000LL);
	return ts;
}

/* The earlier of two deadlines. */
static inline const struct timespec *
clock_earlier(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? a : b;
	return a->tv_nsec <= b->tv_nsec ? a : b;
}

#endif
