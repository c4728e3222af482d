/* log.c - see log.h. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "codeexecd";
static int log_foreground = 1;
static int log_level = LOG_INFO;
static log_sink_fn log_sink;

void
log_init(const char *ident, int foreground, int facility)
{
	log_ident = ident;
	log_foreground = foreground;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, facility);
}

void
log_set_level(int priority)
{
	log_level = priority;
}

void
log_set_sink(log_sink_fn sink)
{
	log_sink = sink;
}

int
log_facility_from_name(const char *name)
{
	static const struct {
		const char *name;
		int facility;
	} table[] = {
		{"daemon", LOG_DAEMON}, {"user", LOG_USER},	{"auth", LOG_AUTH},
		{"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1}, {"local2", LOG_LOCAL2},
		{"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4}, {"local5", LOG_LOCAL5},
		{"local6", LOG_LOCAL6}, {"local7", LOG_LOCAL7},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(name, table[i].name) == 0)
			return table[i].facility;
	return -1;
}

/* Write one finished line to wherever logging goes now. */
static void
log_emit(int priority, const char *line)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const char *names[] = {"emerg", "alert", "crit", "error",
				      "warning", "notice", "info", "debug"};

	if (log_sink) {
		log_sink(priority, line);
		return;
	}
	if (!log_foreground) {
		syslog(priority, "%s", line);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char stamp[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	pthread_mutex_lock(&lock);
	fprintf(stderr, "%s.%03ld %s[%d] %s: %s\n", stamp, ts.tv_nsec / 1000000, log_ident,
		(int)getpid(), names[priority & 7], line);
	pthread_mutex_unlock(&lock);
}

void
log_vmsg(int priority, const char *fmt, va_list ap)
{
	char line[4096];

	if ((priority & 7) > log_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	log_emit(priority & 7, line);
}

void
log_msg(int priority, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(priority, fmt, ap);
	va_end(ap);
}

/* Format `fmt` and append ": strerror(saved errno)". */
static void
log_verrno(int priority, int saved, const char *fmt, va_list ap)
{
	char msg[3072];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_msg(priority, "%s: %s", msg, strerror(saved));
}

#define LOG_FN(fn, prio)                                                                           \
	void fn(const char *fmt, ...)                                                              \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		log_vmsg(prio, fmt, ap);                                                           \
		va_end(ap);                                                                        \
	}
LOG_FN(log_debug, LOG_DEBUG)
LOG_FN(log_info, LOG_INFO)
LOG_FN(log_warnx, LOG_WARNING)

void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	log_verrno(LOG_WARNING, saved, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	log_verrno(LOG_CRIT, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
