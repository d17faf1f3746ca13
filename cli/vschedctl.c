/*
 * vschedctl: the administrator's command line — global options and command dispatch.
 * See docs/vschedctl.md for the interface and vschedctl.h for the exit statuses.
 */
#include "vschedctl.h"

#include "ctladmin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *f)
{
	fputs(
	    "usage: vschedctl [-s ENDPOINT] [-C CONTROLLER] [-k KEY --controller-key CERT]\n"
	    "                 COMMAND [ARGS]\n"
	    "\n"
	    "  task add PID --period DUR --slice DUR [--deadline DUR] [--phase DUR]\n"
	    "               [--cpu N] [--park stop|idle] [--anchor epoch|wakeup]\n"
	    "  task set PID --period DUR --slice DUR [--deadline DUR] [--phase DUR]\n"
	    "               [--anchor epoch|wakeup]\n"
	    "  task del PID\n"
	    "  task list [--json]\n"
	    "  epoch [WALLCLOCK_NS|now]\n"
	    "  status [--json]        node figures: finest period served, parking, ...\n"
	    "  selftest [--wait]      measure the finest period now (on a free CPU)\n"
	    "  run --period DUR --slice DUR [--deadline DUR] [--phase DUR] [--cpu N]\n"
	    "      [--park stop|idle] [--anchor epoch|wakeup] -- CMD [ARGS]\n"
	    "  job run --job NAME [--rank N] [--rate PERCENT] [--agent ENDPOINT] -- CMD [ARGS]\n"
	    "  keygen FILE [--node NAME | --role read|full]   a CURVE key pair (docs/security.md)\n"
	    "  help\n"
	    "vsched-controller (cluster-wide):\n",
	    f);
	ctladmin_usage(f);
	fputs("\n"
	      "Durations need a unit: ns us ms s m h d (10ms, 1.5s, 250us).\n"
	      "ENDPOINT: -s, else $" CLI_ENDPOINT_ENV ", else " CLI_DEFAULT_ENDPOINT ".\n"
	      "KEY (this administrator's secret certificate) and CERT (the controller's public\n"
	      "one): CURVE on a tcp CONTROLLER; else $" CTL_KEY_ENV " and $" CTL_SERVER_KEY_ENV
	      ".\n"
	      "Exit status: 0 ok, 1 refused or failed, 2 usage error, 3 no answer from vsched;\n"
	      "run exits with the command's status (128+N if killed by signal N).\n",
	      f);
}

/* The admin commands' CURVE keys (either "" or NULL: not given). 0 or the exit status. */
static int use_keys(const char *key, const char *server)
{
	static struct zreq_curve curve;
	int rc =
	    ctladmin_keys(key && key[0] ? key : NULL, server && server[0] ? server : NULL, &curve);

	if (rc == 0)
		ctladmin_curve = &curve;
	return rc == 1 ? 0 : rc;
}

int main(int argc, char **argv)
{
	const char *endpoint = getenv(CLI_ENDPOINT_ENV);
	const char *controller = getenv(CTL_CONTROLLER_ENV);
	const char *key = getenv(CTL_KEY_ENV), *server = getenv(CTL_SERVER_KEY_ENV);
	const char *cmd;
	int i = 1, rc;

	if (endpoint == NULL || endpoint[0] == '\0')
		endpoint = CLI_DEFAULT_ENDPOINT;
	if (controller == NULL || controller[0] == '\0')
		controller = CTL_DEFAULT_CONTROLLER;

	/* global options, before the command */
	while (i < argc && argv[i][0] == '-') {
		const char *a = argv[i];

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cli_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (strcmp(a, "-s") == 0 || strcmp(a, "--endpoint") == 0) {
			if (i + 1 >= argc || argv[i + 1][0] == '\0') {
				fprintf(stderr, "vschedctl: option %s needs an ENDPOINT\n", a);
				return CLI_EXIT_USAGE;
			}
			endpoint = argv[i + 1];
			i += 2;
			continue;
		}
		if (strcmp(a, "-C") == 0 || strcmp(a, "--controller") == 0) {
			if (i + 1 >= argc || argv[i + 1][0] == '\0') {
				fprintf(stderr, "vschedctl: option %s needs an ENDPOINT\n", a);
				return CLI_EXIT_USAGE;
			}
			controller = argv[i + 1];
			i += 2;
			continue;
		}
		if (strcmp(a, "-k") == 0 || strcmp(a, "--key") == 0 ||
		    strcmp(a, "--controller-key") == 0) {
			if (i + 1 >= argc || argv[i + 1][0] == '\0') {
				fprintf(stderr, "vschedctl: option %s needs a FILE\n", a);
				return CLI_EXIT_USAGE;
			}
			*(a[2] == 'c' ? &server : &key) = argv[i + 1];
			i += 2;
			continue;
		}
		if (strncmp(a, "-s", 2) == 0) { /* -sENDPOINT */
			endpoint = a + 2;
			i++;
			continue;
		}
		if (strncmp(a, "--endpoint=", 11) == 0 && a[11] != '\0') {
			endpoint = a + 11;
			i++;
			continue;
		}
		fprintf(stderr, "vschedctl: unknown option '%s' (see vschedctl --help)\n", a);
		return CLI_EXIT_USAGE;
	}
	if (i >= argc) {
		fprintf(stderr, "vschedctl: missing command (see vschedctl --help)\n");
		return CLI_EXIT_USAGE;
	}

	cmd = argv[i++];
	ctladmin_endpoint = controller;
	if (strcmp(cmd, "keygen") == 0)
		return cmd_keygen(argc - i, argv + i);
	if ((rc = use_keys(key, server)) != 0)
		return rc;
	if (strcmp(cmd, "help") == 0) {
		cli_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(cmd, "task") == 0)
		return cmd_task(endpoint, argc - i, argv + i);
	if (strcmp(cmd, "epoch") == 0)
		return cmd_epoch(endpoint, argc - i, argv + i);
	if (strcmp(cmd, "status") == 0)
		return cmd_status(endpoint, argc - i, argv + i);
	if (strcmp(cmd, "selftest") == 0)
		return cmd_selftest(endpoint, argc - i, argv + i);
	if (strcmp(cmd, "run") == 0)
		return cmd_run(endpoint, argc - i, argv + i);
	if (strcmp(cmd, "job") == 0)
		return cmd_job(endpoint, argc - i, argv + i);
	if (strcmp(cmd, "rate") == 0)
		return cmd_rate(controller, argc - i, argv + i);
	if (strcmp(cmd, "node") == 0)
		return cmd_node(controller, argc - i, argv + i);
	if (strcmp(cmd, "top") == 0)
		return cmd_top(controller, argc - i, argv + i);
	fprintf(stderr, "vschedctl: unknown command '%s' (see vschedctl --help)\n", cmd);
	return CLI_EXIT_USAGE;
}
