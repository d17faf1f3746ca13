/*
 * vschedctl task add|set|del|list and vschedctl epoch: one request each to the local vsched.
 * add/set take one reservation (--period --slice [--deadline] [--phase]) or up to
 * VSP_MAX_WINDOWS windows of one frame (--period T --window PHASE+LENGTH[/SLICE] ...).
 * Success prints vsched's one-line confirmation on stdout (or the listing); a refusal prints
 * "vschedctl: task add 1234: <vsched's reason>" on stderr and exits 1.
 */
#include "vschedctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sends req and reports the outcome; what names it in messages ("task add 1234"). */
static int exchange(const char *endpoint, const char *what, const struct vsp_request *req,
                    struct vsp_reply *rep)
{
	int rc = client_request(endpoint, req, rep);

	if (rc != 0)
		return rc;
	if (rep->status != 0) {
		fprintf(stderr, "vschedctl: %s: %s\n", what,
		        rep->msg[0] != '\0' ? rep->msg : strerror(-rep->status));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int task_add_set(const char *endpoint, bool add, int argc, char **argv)
{
	struct cli_opt add_opts[] = {
	    {"period", true, NULL}, {"slice", true, NULL}, {"deadline", true, NULL},
	    {"phase", true, NULL},  {"cpu", true, NULL},   {"park", true, NULL},
	    {"anchor", true, NULL}, {NULL, false, NULL},
	};
	/* set changes the reservation only: the CPU and the park policy stay */
	struct cli_opt set_opts[] = {
	    {"period", true, NULL}, {"slice", true, NULL},  {"deadline", true, NULL},
	    {"phase", true, NULL},  {"anchor", true, NULL}, {NULL, false, NULL},
	};
	struct cli_opt *opts = add ? add_opts : set_opts;
	const char *cmd = add ? "task add" : "task set";
	struct vsp_request req = {.type = add ? VSP_ADD : VSP_SET, .cpu = -1};
	struct vsp_reply rep;
	struct vsp_resv win[VSP_MAX_WINDOWS];
	const char *pos[1];
	char what[64];
	int rc, nwin;

	nwin = args_take_windows(cmd, &argc, argv, win);
	if (args_parse(cmd, argc, argv, opts, pos, 1, false, NULL, NULL) != 1)
		args_fail(cmd, "PID is required");
	req.pid = args_pid(cmd, pos[0]);
	args_reservation(cmd, opts, win, nwin, &req);
	if (args_opt(opts, "anchor")->value != NULL)
		req.anchor = args_anchor(cmd, args_opt(opts, "anchor")->value);
	if (add) {
		const struct cli_opt *cpu = args_opt(opts, "cpu"), *park = args_opt(opts, "park");

		if (cpu->value != NULL)
			req.cpu = args_cpu(cmd, cpu->value);
		req.park = park->value != NULL ? args_park(cmd, park->value) : VSP_PARK_DEFAULT;
	}
	snprintf(what, sizeof(what), "%s %d", cmd, (int)req.pid);
	rc = exchange(endpoint, what, &req, &rep);
	if (rc == CLI_EXIT_OK)
		printf("%s\n", rep.msg);
	free(rep.tasks);
	return rc;
}

static int task_del(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {{NULL, false, NULL}};
	struct vsp_request req = {.type = VSP_DEL, .cpu = -1};
	struct vsp_reply rep;
	const char *pos[1];
	char what[64];
	int rc;

	if (args_parse("task del", argc, argv, opts, pos, 1, false, NULL, NULL) != 1)
		args_fail("task del", "PID is required");
	req.pid = args_pid("task del", pos[0]);
	snprintf(what, sizeof(what), "task del %d", (int)req.pid);
	rc = exchange(endpoint, what, &req, &rep);
	if (rc == CLI_EXIT_OK)
		printf("%s\n", rep.msg);
	free(rep.tasks);
	return rc;
}

static int task_list(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {{"json", false, NULL}, {NULL, false, NULL}};
	struct vsp_request req = {.type = VSP_LIST, .cpu = -1};
	struct vsp_reply rep;
	int rc;

	args_parse("task list", argc, argv, opts, NULL, 0, false, NULL, NULL);
	rc = exchange(endpoint, "task list", &req, &rep);
	if (rc == CLI_EXIT_OK) {
		if (opts[0].value != NULL)
			output_json(stdout, rep.tasks, rep.ntasks);
		else
			output_table(stdout, rep.tasks, rep.ntasks);
	}
	free(rep.tasks);
	return rc;
}

int cmd_task(const char *endpoint, int argc, char **argv)
{
	const char *sub;

	if (argc < 1)
		args_fail("task", "missing subcommand (add, set, del or list)");
	sub = argv[0];
	if (strcmp(sub, "add") == 0)
		return task_add_set(endpoint, true, argc - 1, argv + 1);
	if (strcmp(sub, "set") == 0)
		return task_add_set(endpoint, false, argc - 1, argv + 1);
	if (strcmp(sub, "del") == 0)
		return task_del(endpoint, argc - 1, argv + 1);
	if (strcmp(sub, "list") == 0)
		return task_list(endpoint, argc - 1, argv + 1);
	args_fail("task", "unknown subcommand '%s' (add, set, del or list)", sub);
}

int cmd_epoch(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {{NULL, false, NULL}};
	struct vsp_request req = {.type = VSP_EPOCH, .cpu = -1};
	struct vsp_reply rep;
	const char *pos[1];
	int n, rc;

	n = args_parse("epoch", argc, argv, opts, pos, 1, false, NULL, NULL);
	if (n == 1 && strcmp(pos[0], "now") != 0) {
		const char *s = pos[0];
		uint64_t v = 0;

		if (*s == '\0')
			args_fail("epoch",
			          "WALLCLOCK_NS '': must be a number of nanoseconds or 'now'");
		for (; *s != '\0'; s++) {
			if (*s < '0' || *s > '9')
				args_fail(
				    "epoch",
				    "WALLCLOCK_NS '%s': must be a number of nanoseconds since "
				    "1970 (CLOCK_REALTIME) or 'now'",
				    pos[0]);
			if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
				args_fail("epoch", "WALLCLOCK_NS '%s': too large", pos[0]);
			v = v * 10 + (uint64_t)(*s - '0');
		}
		req.epoch_realtime_ns = v;
	}
	rc = exchange(endpoint, "epoch", &req, &rep);
	if (rc == CLI_EXIT_OK)
		printf("%s\n", rep.msg);
	free(rep.tasks);
	return rc;
}
