/*
 * Test applications run under vsched (docs/apps.md): bsp, a synthetic bulk-synchronous
 * program like Patterns (papers/004 Sect. 5.1), membench, a memory streamer like MemBUS's
 * membench (papers/000 Sect. 2), and iowait, ranks that compute, block and meet at a
 * barrier. Private header for what the programs share: argument parsing, clocks, the
 * calibrated compute loop, iteration stamps. Prototypes grouped by file.
 *
 * Exit statuses of both programs: 0 success, 1 runtime failure (peer gone, timeout,
 * resources), 2 usage error; every failure prints one line on stderr.
 */
#ifndef VSCHED_APPS_H
#define VSCHED_APPS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "apprate.h"
#include "timeutil.h"

#define APP_EXIT_OK    0
#define APP_EXIT_FAIL  1
#define APP_EXIT_USAGE 2

/* apputil.c */
/* The program's name in messages ("bsp", "membench"); set once in main. */
extern const char *app_name;
/* Prints "NAME: reason" and exits APP_EXIT_USAGE. */
_Noreturn void app_usage_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A getopt error (opt ':' or anything unknown): "option X needs a value" or "unknown option
 * X (see APP --help)"; exits 2. */
_Noreturn void app_option_fail(int opt, char **argv);
/* The value of --job, checked as the report protocol's job name (exits 2 when it is not). */
const char *app_job(const char *s);
/* Prints "NAME: reason" and exits APP_EXIT_FAIL. */
_Noreturn void app_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Option value parsers: each checks form and range and, on a bad value, ends the program
 * with one line naming the option (app_usage_fail).
 */
uint64_t app_duration(const char *opt, const char *s, bool allow_zero);
/* Bytes: digits with an optional binary suffix k K KiB M MiB G GiB (1024-based) or B. */
uint64_t app_size(const char *opt, const char *s, uint64_t min, uint64_t max);
/* Decimal digits only, min..max. */
uint64_t app_uint(const char *opt, const char *s, uint64_t min, uint64_t max);
/* CPU time of the calling thread in ns (CLOCK_THREAD_CPUTIME_ID; a syscall). */
uint64_t app_thread_cpu_ns(void);
/* CPU time of the whole process in ns. */
uint64_t app_process_cpu_ns(void);
/* Seconds from ns, for printing. */
static inline double app_sec(uint64_t ns)
{
	return (double)ns / 1e9;
}
/*
 * Opens the libapprate handle for job (NULL: $VSCHED_JOB). Without a job name anywhere it
 * returns NULL silently (the program runs without reports); a failed open with a job name
 * prints one warning and returns NULL. The program works the same either way.
 */
apprate_t *app_apprate_open(const char *job);
/* Installs handler-less flags for SIGINT/SIGTERM/SIGHUP (see app_stop) and ignores SIGPIPE. */
void app_signals(void);
/* The signal that asked us to stop, or 0. */
extern volatile sig_atomic_t app_stop;

/* spin.c — the compute phase, measured in CPU time */
enum spin_mode {
	SPIN_WORK, /* a fixed amount of arithmetic, calibrated to take the requested CPU time */
	SPIN_CPU,  /* spin until the thread's CPU clock has advanced by the requested time */
};
struct spin {
	enum spin_mode mode;
	double ns_per_loop; /* SPIN_WORK: calibrated CPU ns per loop step */
	uint64_t sink;      /* keeps the arithmetic alive */
};
#define SPIN_ENV "APP_SPIN_NS_PER_LOOP"
/*
 * Calibrates s for mode: for SPIN_WORK, the value of $APP_SPIN_NS_PER_LOOP when set (the
 * program ends with a usage error when it is not a number in [0.01, 1000]), else times the
 * loop against the thread's CPU clock (~50 ms of CPU, median of many chunks, so that
 * preemption does not bias it).
 */
void spin_init(struct spin *s, enum spin_mode mode);
/* The calibration given in $APP_SPIN_NS_PER_LOOP, 0 when unset; ends the program with a
 * one-line usage error when it is not a number in [0.01, 1000] (call it before forking
 * ranks, so that the error is the program's). */
double spin_given_ns_per_loop(void);
/*
 * Computes for cpu_ns of CPU time (SPIN_WORK: the calibrated equivalent in loop steps).
 * Under a CPU reservation it takes longer in wall time: that is the point. Returns early
 * (false) when app_stop is set.
 */
bool spin_run(struct spin *s, uint64_t cpu_ns);

/* stamps.c — the application's own record of its iterations (--stamps FILE) */
struct stamps;
/* Creates path for "ITERATION MONOTONIC_NS" lines; NULL path: NULL (recording off). Ends the
 * program (app_fail) when the file cannot be created. */
struct stamps *stamps_open(const char *path);
/* Records the end of the next iteration at now_ns (CLOCK_MONOTONIC). NULL: nothing. Writes at
 * most once a second. */
void stamps_add(struct stamps *s, uint64_t now_ns);
/* Writes what is held and closes; accepts NULL, clears *s. */
void stamps_close(struct stamps **s);

#endif
