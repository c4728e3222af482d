/*
 * clock.h - the project's one notion of time for deadlines and durations:
 * seconds on the monotonic clock, so they survive changes of the wall
 * clock. Wall-clock times are for people only: time stamps in logs and
 * messages (clock_wall_format).
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

/*
 * The wall-clock time now, formatted by strftime's fmt into out[size], in
 * UTC when `utc` is set, else in local time. Returns the nanoseconds within
 * that second, for a stamp finer than strftime's.
 */
static inline long __attribute__((format(strftime, 3, 0)))
clock_wall_format(char *out, size_t size, const char *fmt, int utc)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (utc)
		gmtime_r(&ts.tv_sec, &tm);
	else
		localtime_r(&ts.tv_sec, &tm);
	/* The format attribute above has each caller's fmt checked instead. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	strftime(out, size, fmt, &tm);
#pragma GCC diagnostic pop
	return ts.tv_nsec;
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
