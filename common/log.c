/* Logging to stderr (foreground) or syslog; see log.h. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static const char *log_prog = "vsched";
static int log_fg = 1;
static int log_verb;

void log_init(const char *progname, int foreground, int verbose)
{
	log_prog = progname;
	log_fg = foreground;
	log_verb = verbose;
	if (!foreground)
		openlog(progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int log_verbose(void)
{
	return log_verb;
}

__attribute__((format(printf, 2, 0))) static void vlog(int pri, const char *fmt, va_list ap,
                                                       const char *suffix)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_fg) {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld %s: %s%s%s\n", when, ts.tv_nsec / 1000000, log_prog, msg,
		        suffix ? ": " : "", suffix ? suffix : "");
		fflush(stderr);
	} else {
		syslog(pri, "%s%s%s", msg, suffix ? ": " : "", suffix ? suffix : "");
	}
}

void log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void log_warnx_limited(uint64_t *count, const char *fmt, ...)
{
	va_list ap;

	if (++*count > LOG_LIMIT_FIRST && *count % LOG_LIMIT_EVERY != 0)
		return;
	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verb)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, strerror(saved));
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
