/*
 * vschedctl commands that talk to vsched-controller (admin protocol, common/proto_admin.h):
 * rate, job list|show|set, node list, top. Defined in cmd_ctl.c; the dashboard text comes
 * from dashboard.c (shared with vsched-controller -d).
 *
 * Endpoint: -C ENDPOINT (global option), else $VSCHED_CONTROLLER, else
 * CTL_DEFAULT_CONTROLLER. Exit status as vschedctl.h: 0 ok, 1 refused (one line with the
 * controller's reason on stderr, nothing changed), 2 usage, 3 no answer.
 */
#ifndef VSCHEDCTL_CTLADMIN_H
#define VSCHEDCTL_CTLADMIN_H

#include <stdio.h>

#include "proto_admin.h"
#include "zreq.h"

#define CTL_DEFAULT_CONTROLLER "tcp://127.0.0.1:7711"
#define CTL_CONTROLLER_ENV     "VSCHED_CONTROLLER"
#define CTL_KEY_ENV            "VSCHED_KEY"            /* -k: the admin's secret certificate */
#define CTL_SERVER_KEY_ENV     "VSCHED_CONTROLLER_KEY" /* the controller's public one */

/* cmd_ctl.c */
/* The controller's endpoint (main sets it from -C / the environment / the default). */
extern const char *ctladmin_endpoint;
/* The CURVE keys for it (NULL: none; main sets them from -k / --controller-key). */
extern const struct zreq_curve *ctladmin_curve;
int cmd_rate(const char *controller, int argc, char **argv);
int cmd_node(const char *controller, int argc, char **argv);
int cmd_top(const char *controller, int argc, char **argv);
/* `job list|show|set`, entries of job.c's subcommand table: they take vsched's endpoint
 * like their neighbours there and talk to ctladmin_endpoint. */
int cmd_job_list(const char *vsched_endpoint, int argc, char **argv);
int cmd_job_show(const char *vsched_endpoint, int argc, char **argv);
int cmd_job_set(const char *vsched_endpoint, int argc, char **argv);
/* keygen.c */
int cmd_keygen(int argc, char **argv);
/* The admin's keys from key (secret certificate) and server (the controller's public
 * one), both or neither: 0 with *out set, 1 when neither is given, else prints one line
 * and returns CLI_EXIT_USAGE. */
int ctladmin_keys(const char *key, const char *server, struct zreq_curve *out);
/* Usage lines of these commands. */
void ctladmin_usage(FILE *f);
/*
 * One request/reply exchange with the controller, timeout_ms at most in all. Returns 0
 * with *rep decoded (release it with padm_reply_release, also when rep->status < 0), or
 * prints one line and returns CLI_EXIT_NOANSWER / CLI_EXIT_FAIL.
 */
int ctladmin_request(const char *endpoint, const struct padm_request *q, struct padm_reply *rep,
                     int timeout_ms, int quiet);

#endif
