/*
 * What bsp and membench share: option value parsing with one-line reasons, clocks,
 * signal flags, and opening libapprate from the environment.
 */
#include "apps.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "proto_apprate.h"
#include "sigutil.h"

const char *app_name = "app";
volatile sig_atomic_t app_stop;

__attribute__((format(printf, 1, 0))) static void vmsg(const char *fmt, va_list ap)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s: ", app_name);

	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* one write per line, so that the lines of several ranks do not interleave */
	fprintf(stderr, "%s\n", line);
}

void app_usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(APP_EXIT_USAGE);
}

void app_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(APP_EXIT_FAIL);
}

uint64_t app_duration(const char *opt, const char *s, bool allow_zero)
{
	uint64_t ns = 0;
	int rc = duration_parse(s, &ns);
	size_t digits = strspn(s, "0123456789.");

	if (rc == -ERANGE)
		app_usage_fail("--%s '%s': too large for 64-bit nanoseconds", opt, s);
	if (rc != 0) {
		if (s[0] == '-')
			app_usage_fail("--%s '%s': must not be negative", opt, s);
		if (digits > 0 && s[digits] == '\0')
			app_usage_fail(
			    "--%s '%s': missing unit (one of ns us ms s m h d, e.g. 10ms)", opt, s);
		app_usage_fail("--%s '%s': not a duration (e.g. 10ms, 1.5s, 250us)", opt, s);
	}
	if (ns == 0 && !allow_zero)
		app_usage_fail("--%s '%s': must be greater than 0", opt, s);
	return ns;
}

/* Digits only into *v; 0, -EINVAL or -ERANGE. */
static int digits_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (x > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return 0;
}

uint64_t app_uint(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v = 0;
	int rc = digits_u64(s, strlen(s), &v);

	if (rc == -EINVAL)
		app_usage_fail("--%s '%s': must be a non-negative integer", opt, s);
	if (rc != 0 || v < min || v > max)
		app_usage_fail("--%s '%s': must be between %llu and %llu", opt, s,
		               (unsigned long long)min, (unsigned long long)max);
	return v;
}

uint64_t app_size(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} sfx[] = {{"", 0},   {"B", 0},    {"k", 10}, {"K", 10},  {"KiB", 10},
	           {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30}};
	size_t nd = strspn(s, "0123456789");
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (strcmp(s + nd, sfx[i].suffix) == 0)
			break;
	if (nd == 0 || i == sizeof(sfx) / sizeof(sfx[0]))
		app_usage_fail("--%s '%s': not a size (bytes, or with K/KiB, M/MiB, G/GiB: 64KiB)",
		               opt, s);
	if (digits_u64(s, nd, &v) != 0 || v > (UINT64_MAX >> sfx[i].shift))
		app_usage_fail("--%s '%s': too large", opt, s);
	v <<= sfx[i].shift;
	if (v < min || v > max)
		app_usage_fail("--%s '%s': must be between %llu and %llu bytes", opt, s,
		               (unsigned long long)min, (unsigned long long)max);
	return v;
}

uint64_t app_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t app_process_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

apprate_t *app_apprate_open(const char *job)
{
	const char *envjob = getenv("VSCHED_JOB");
	apprate_t *r;

	if (job == NULL && (envjob == NULL || envjob[0] == '\0'))
		return NULL; /* not run as a vsched job: no reports */
	r = apprate_open(job, NULL);
	if (r == NULL)
		fprintf(stderr, "%s: warning: libapprate: %s (running without rate reports)\n",
		        app_name, apprate_strerror(-errno));
	return r;
}

static void on_signal(int sig)
{
	app_stop = sig;
}

void app_signals(void)
{
	/* no SA_RESTART: a blocking poll() returns EINTR and the loop sees app_stop */
	sig_install(on_signal, (const int[]){SIGINT, SIGTERM, SIGHUP, 0});
}

void app_option_fail(int opt, char **argv)
{
	if (opt == ':')
		app_usage_fail("option %s needs a value", argv[optind - 1]);
	if (optopt != 0 && optopt < 256)
		app_usage_fail("unknown option '-%c' (see %s --help)", optopt, app_name);
	app_usage_fail("unknown option '%s' (see %s --help)", argv[optind - 1], app_name);
}

const char *app_job(const char *s)
{
	if (aproto_check_job(s) != 0)
		app_usage_fail("--job '%s': must be 1..%d printable characters, no blanks", s,
		               APROTO_JOB_MAX);
	return s;
}
