/*
 * log.h - logging for both processes.
 *
 * Owns the process-wide log destination: stderr (foreground), syslog
 * (detached) or a caller-provided sink (the worker forwards its lines to the
 * supervisor over IPC). Functions ending in "x" do not append errno.
 * Lines are escaped (log_escape) before they reach stderr or syslog.
 * How a failing function hands its reason to the caller: see err.h.
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <syslog.h>

/* A sink receives every formatted line, already prefixed with nothing. */
typedef void (*log_sink_fn)(int priority, const char *line);

/* Start logging as `ident`; to stderr when `foreground`, else to syslog. */
void log_init(const char *ident, int foreground, int facility);
/*
 * From now on this process (a child that is not the daemon's parent) logs
 * as `ident` to syslog, and on stderr with "tag: " after the level, so a
 * line says which process wrote it; stderr keeps log_init's ident, the
 * name readers and scripts match. Both borrowed (static strings).
 */
void log_set_process(const char *ident, const char *tag);
/* Close the syslog connection (before closing descriptors wholesale), and
 * open it again as log_init (or log_set_process) left it. No-ops in the
 * foreground. */
void log_close(void);
void log_reopen(void);
/* Messages above this priority (LOG_INFO by default) are dropped. */
void log_set_level(int priority);
/* Route every line to `sink` instead of stderr/syslog (NULL restores). */
void log_set_sink(log_sink_fn sink);
/* Facility by name ("daemon", "local0".."local7", "user"); -1 if unknown. */
int log_facility_from_name(const char *name);

/*
 * Copy `in` to `out` (`size` bytes, at least 1) so that it fits on one log
 * line and cannot pass for something else: a backslash becomes \\, line
 * breaks and tabs \n \r \t, other control bytes, DEL and bytes that are not
 * UTF-8 \xHH, and C1 controls, U+2028/2029 and bidi overrides \uHHHH.
 * Stops early, at a character boundary, when `out` is full. Returns out.
 * Every log line passes through it (log_vmsg); use it directly only when
 * client text goes somewhere else that is read line by line.
 */
char *log_escape(const char *in, char *out, size_t size);

void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int priority, const char *fmt, va_list ap);
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
