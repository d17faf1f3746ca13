/*
 * vschedctl: the administrator's command line (DESIGN.md §6). This part talks to the local
 * vsched (task add/set/del/list, epoch, run). Private header, prototypes grouped by file.
 *
 * Exit status: 0 success, 1 refused by vsched or failed, 2 usage error, 3 no answer from
 * vsched; `run` exits with its command's status (128 + signal when it was killed).
 */
#ifndef VSCHEDCTL_H
#define VSCHEDCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto_vsched.h"

#define CLI_EXIT_OK       0
#define CLI_EXIT_FAIL     1
#define CLI_EXIT_USAGE    2
#define CLI_EXIT_NOANSWER 3

#define CLI_DEFAULT_ENDPOINT "ipc:///run/vsched/api.sock"
#define CLI_ENDPOINT_ENV     "VSCHED_ENDPOINT"
#define CLI_TIMEOUT_MS       3000

/* vschedctl.c */
void cli_usage(FILE *f);

/* args.c — every failure prints one line "vschedctl: CMD: reason" and exits 2 */
struct cli_opt {
	const char *name;  /* long option without the dashes: "period" */
	bool has_arg;      /* takes a value ("--period 10ms" or "--period=10ms") */
	const char *value; /* set by args_parse: the value, or "" for a flag; NULL if absent */
};
/*
 * Parses argv[0, argc) for command cmd. Options are matched against opts (terminated by a
 * NULL name); others are positional, collected into pos (at most maxpos, more is an error).
 * "--" ends the options. With stop_at_command, the first positional argument also ends
 * them and it and everything after it are returned in *rest / *nrest (the command of
 * `run`); otherwise *rest may be NULL. Arguments that look like negative numbers are
 * positional, so that "task del -5" is refused for its PID, not as an unknown option.
 */
int args_parse(const char *cmd, int argc, char **argv, struct cli_opt *opts, const char **pos,
               int maxpos, bool stop_at_command, char ***rest, int *nrest);
/* Prints "vschedctl: CMD: reason" and exits 2. */
_Noreturn void args_fail(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The option named name in opts (must exist). */
struct cli_opt *args_opt(struct cli_opt *opts, const char *name);
int32_t args_pid(const char *cmd, const char *s);
int32_t args_cpu(const char *cmd, const char *s);
/* A duration with a unit; zero allowed only when allow_zero. */
uint64_t args_duration(const char *cmd, const char *opt, const char *s, bool allow_zero);
uint8_t args_park(const char *cmd, const char *s);
/* "epoch" or "wakeup" (--anchor). */
uint8_t args_anchor(const char *cmd, const char *s);
/* Fills r from --period --slice (required) and --deadline --phase (optional) in opts. */
void args_resv(const char *cmd, struct cli_opt *opts, struct vsp_resv *r);
/*
 * Removes every "--window PHASE+LENGTH[/SLICE]" (or --window=...) before "--" from argv,
 * parsing each into w[] (period 0; SLICE defaults to LENGTH). Returns their number, at most
 * VSP_MAX_WINDOWS (more is a usage error).
 */
int args_take_windows(const char *cmd, int *argc, char **argv, struct vsp_resv *w);
/*
 * Fills req's reservation: with nwin == 0 from --period --slice [--deadline] [--phase];
 * otherwise the nwin windows (sorted by phase) with --period, which --slice, --deadline and
 * --phase may not accompany.
 */
void args_reservation(const char *cmd, struct cli_opt *opts, struct vsp_resv *w, int nwin,
                      struct vsp_request *req);

/* client.c */
/*
 * Sends req to endpoint and waits for the reply, CLI_TIMEOUT_MS at most in all. Returns 0
 * with *rep decoded (the caller frees rep->tasks, even when rep->status < 0), or prints one
 * line and returns CLI_EXIT_NOANSWER (no answer) or CLI_EXIT_FAIL (bad reply, local error).
 */
int client_request(const char *endpoint, const struct vsp_request *req, struct vsp_reply *rep);

/* task.c */
int cmd_task(const char *endpoint, int argc, char **argv);
int cmd_epoch(const char *endpoint, int argc, char **argv);
/* status.c */
int cmd_status(const char *endpoint, int argc, char **argv);
int cmd_selftest(const char *endpoint, int argc, char **argv);

/* run.c */
int cmd_run(const char *endpoint, int argc, char **argv);

/* job.c — `job SUBCOMMAND`: dispatches run (job.c) and, beside it, list/show */
int cmd_job(const char *endpoint, int argc, char **argv);

/* output.c */
/* Sorts tasks by pid and prints them as the 80-column table of `task list`. */
void output_table(FILE *f, struct vsp_task_stat *t, uint32_t n);
/* Sorts tasks by pid and prints them as a JSON array of objects. */
void output_json(FILE *f, struct vsp_task_stat *t, uint32_t n);

#endif
