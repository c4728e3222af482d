/* log.c - see log.h. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

static const char *log_ident = "codeexecd";
static const char *syslog_ident = "codeexecd";
static const char *log_tag; /* on stderr, before each line; NULL: none */
static int log_foreground = 1;
static int log_facility = LOG_DAEMON;
static int log_level = LOG_INFO;
static log_sink_fn log_sink;

void
log_init(const char *ident, int foreground, int facility)
{
	log_ident = syslog_ident = ident;
	log_foreground = foreground;
	log_facility = facility;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, facility);
}

void
log_set_process(const char *ident, const char *tag)
{
	syslog_ident = ident;
	log_tag = tag;
	if (!log_foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, log_facility);
}

void
log_close(void)
{
	if (!log_foreground)
		closelog();
}

void
log_reopen(void)
{
	if (!log_foreground)
		openlog(syslog_ident, LOG_PID | LOG_NDELAY, log_facility);
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

/* The length of the well-formed UTF-8 sequence at `s`, and its code point; 0 if none. */
static size_t
utf8_sequence(const unsigned char *s, unsigned *cp)
{
	unsigned c = s[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xBF;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2, *cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, *cp = c & 0x0F, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, *cp = c & 0x07, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3F);
		lo = 0x80, hi = 0xBF;
	}
	return n;
}

/* Code points that would break or disguise a line: C1 controls, separators, bidi. */
static int
unsafe_code_point(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

char *
log_escape(const char *in, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t used = 0;
	char piece[16];

	while (*s) {
		unsigned cp;
		size_t n = 1;
		if (*s == '\\') {
			snprintf(piece, sizeof(piece), "\\\\");
		} else if (*s == '\n' || *s == '\r' || *s == '\t') {
			snprintf(piece, sizeof(piece), "\\%c", *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
		} else if (*s < 0x20 || *s == 0x7F) {
			snprintf(piece, sizeof(piece), "\\x%02x", *s);
		} else if (*s < 0x80) {
			piece[0] = (char)*s;
			piece[1] = '\0';
		} else if ((n = utf8_sequence(s, &cp)) == 0) {
			n = 1;
			snprintf(piece, sizeof(piece), "\\x%02x", *s);
		} else if (unsafe_code_point(cp)) {
			snprintf(piece, sizeof(piece), "\\u%04x", cp);
		} else {
			memcpy(piece, s, n);
			piece[n] = '\0';
		}
		size_t len = strlen(piece);
		if (used + len + 1 > size)
			break;
		memcpy(out + used, piece, len);
		used += len;
		s += n;
	}
	out[used] = '\0';
	return out;
}

/* Write one finished line to wherever logging goes now. */
static void
log_emit(int priority, const char *line)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const char *names[] = {"emerg", "alert", "crit", "error",
				      "warning", "notice", "info", "debug"};

	if (!log_foreground) {
		syslog(priority, "%s", line);
		return;
	}
	char stamp[32];
	long nsec = clock_wall_format(stamp, sizeof(stamp), "%H:%M:%S", 0);
	pthread_mutex_lock(&lock);
	fprintf(stderr, "%s.%03ld %s[%d] %s: %s%s%s\n", stamp, nsec / 1000000, log_ident,
		(int)getpid(), names[priority & 7], log_tag ? log_tag : "", log_tag ? ": " : "",
		line);
	pthread_mutex_unlock(&lock);
}

/*
 * Every line is escaped here, once, whatever it carries: methods, tool
 * names, headers and the rest of what clients send cannot end a line early
 * and forge the next one. A sink gets the line unescaped, since its
 * receiver (the supervisor, for a worker) logs it again through here.
 */
void
log_vmsg(int priority, const char *fmt, va_list ap)
{
	char line[4096];
	char escaped[sizeof(line) * 2];

	if ((priority & 7) > log_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_sink) {
		log_sink(priority & 7, line);
		return;
	}
	log_emit(priority & 7, log_escape(line, escaped, sizeof(escaped)));
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

/*
 * The public logging functions of log.h, one line each: `with_errno`
 * appends the text of errno as it was on entry (saved before anything can
 * change it), and `then` runs last (exit for fatal and fatalx).
 */
#define LOG_FN(fn, prio, with_errno, then)                                                         \
	void fn(const char *fmt, ...)                                                              \
	{                                                                                          \
		int saved = errno;                                                                 \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		if (with_errno)                                                                    \
			log_verrno(prio, saved, fmt, ap);                                          \
		else                                                                               \
			log_vmsg(prio, fmt, ap);                                                   \
		va_end(ap);                                                                        \
		then;                                                                              \
	}
LOG_FN(log_debug, LOG_DEBUG, 0, )
LOG_FN(log_info, LOG_INFO, 0, )
LOG_FN(log_warnx, LOG_WARNING, 0, )
LOG_FN(log_warn, LOG_WARNING, 1, )
LOG_FN(fatal, LOG_CRIT, 1, exit(1))
LOG_FN(fatalx, LOG_CRIT, 0, exit(1))
