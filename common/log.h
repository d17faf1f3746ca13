/*
 * One logging module for every daemon (OpenBSD style). log_warn appends strerror(errno),
 * log_warnx does not; fatal/fatalx log and exit(1). Foreground daemons log to stderr,
 * background ones to syslog. Not for real-time hot paths: it formats and writes.
 */
#ifndef VSCHED_LOG_H
#define VSCHED_LOG_H

#include <stdarg.h>

void log_init(const char *progname, int foreground, int verbose);
int log_verbose(void);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
