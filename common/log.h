/*
 * One logging module for every daemon (OpenBSD style). log_warn appends strerror(errno),
 * log_warnx does not; fatal/fatalx log and exit(1). Foreground daemons log to stderr,
 * background ones to syslog. Not for real-time hot paths: it formats and writes.
 * log_warnx_limited bounds what a flood of bad input can log.
 */
#ifndef VSCHED_LOG_H
#define VSCHED_LOG_H

#include <stdarg.h>
#include <stdint.h>

void log_init(const char *progname, int foreground, int verbose);
int log_verbose(void);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * log_warnx for what outsiders can repeat at will (refused frames): the first
 * LOG_LIMIT_FIRST calls counted by *count are logged, then every LOG_LIMIT_EVERY-th, so
 * that a flood cannot fill the log. Counts every call.
 */
#define LOG_LIMIT_FIRST 20
#define LOG_LIMIT_EVERY 1000
void log_warnx_limited(uint64_t *count, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
