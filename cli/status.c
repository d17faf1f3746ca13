/*
 * vschedctl status [--json] and vschedctl selftest [--wait]: the node's figures from the
 * local vsched (INFO), above all the finest period it serves with < 1 % misses, and the
 * self-test that measures it (SELFTEST). See docs/vschedctl.md.
 */
#include "vschedctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"

#define WAIT_POLL_US 200000
#define WAIT_LIMIT_S 60 /* the self-test is bounded well below this */

static const char *selftest_name(uint8_t st)
{
	static const char *const names[] = {"never run", "running", "done", "failed"};

	return st <= VSP_SELFTEST_FAILED ? names[st] : "?";
}

static void print_text(const struct vsp_node_info *n)
{
	char b[32], when[64] = "";
	time_t t = (time_t)(n->selftest_at / 1000000000ULL);
	struct tm tm;

	if (n->selftest_at && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), " at %Y-%m-%d %H:%M:%S UTC", &tm);
	printf("vsched: %u CPUs, admission cap %.1f%% per CPU, %u tasks\n", n->ncpus,
	       (double)n->cap_ppm / 1e4, n->ntasks);
	printf("stop parking: %s; perf counters: %s\n", vsp_stop_name(n->stop_method),
	       n->perf ? "budgets and wake-ups" : "not used");
	if (n->selftest == VSP_SELFTEST_DONE && n->min_period_ns)
		printf("finest period with < 1%% misses: %s (self-test%s)\n",
		       duration_format(n->min_period_ns, b, sizeof(b)), when);
	else if (n->selftest == VSP_SELFTEST_DONE)
		printf("finest period with < 1%% misses: none of the periods tried (self-test%s)\n",
		       when);
	else
		printf("finest period with < 1%% misses: unknown (self-test %s%s)\n",
		       selftest_name(n->selftest), when);
	if (n->nprobe == 0)
		return;
	printf("%8s %7s %7s %6s\n", "PERIOD", "JOBS", "MISSES", "MISS%");
	for (unsigned i = 0; i < n->nprobe && i < VSP_MAX_PROBES; i++) {
		const struct vsp_probe *p = &n->probe[i];
		printf("%8s %7u %7u %6.2f\n", duration_format(p->period_ns, b, sizeof(b)), p->jobs,
		       p->misses, p->jobs ? 100.0 * p->misses / p->jobs : 0.0);
	}
}

static void print_json(const struct vsp_node_info *n)
{
	printf("{\"ncpus\": %u, \"cap_pct\": %.4f, \"tasks\": %u, \"stop_method\": \"%s\", "
	       "\"perf\": %s, \"selftest\": \"%s\", \"min_period_ns\": %llu, "
	       "\"selftest_at_ns\": %llu, \"probes\": [",
	       n->ncpus, (double)n->cap_ppm / 1e4, n->ntasks, vsp_stop_name(n->stop_method),
	       n->perf ? "true" : "false", selftest_name(n->selftest),
	       (unsigned long long)n->min_period_ns, (unsigned long long)n->selftest_at);
	for (unsigned i = 0; i < n->nprobe && i < VSP_MAX_PROBES; i++)
		printf("%s{\"period_ns\": %llu, \"jobs\": %u, \"misses\": %u}", i ? ", " : "",
		       (unsigned long long)n->probe[i].period_ns, n->probe[i].jobs,
		       n->probe[i].misses);
	printf("]}\n");
}

/* One INFO or SELFTEST exchange; prints vsched's refusal. Returns a CLI_EXIT_* status. */
static int ask(const char *endpoint, uint8_t type, struct vsp_node_info *out)
{
	struct vsp_request req = {.type = type, .cpu = -1};
	struct vsp_reply rep;
	int rc = client_request(endpoint, &req, &rep);

	if (rc != 0)
		return rc;
	free(rep.tasks);
	if (rep.status != 0) {
		fprintf(stderr, "vschedctl: %s: %s\n", vsp_type_name(type), rep.msg);
		return CLI_EXIT_FAIL;
	}
	if (!rep.has_info) {
		fprintf(stderr, "vschedctl: %s: the reply carries no node figures\n",
		        vsp_type_name(type));
		return CLI_EXIT_FAIL;
	}
	*out = rep.info;
	return CLI_EXIT_OK;
}

int cmd_status(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {{"json", false, NULL}, {NULL, false, NULL}};
	struct vsp_node_info n;
	int rc;

	args_parse("status", argc, argv, opts, NULL, 0, false, NULL, NULL);
	rc = ask(endpoint, VSP_INFO, &n);
	if (rc != CLI_EXIT_OK)
		return rc;
	if (opts[0].value != NULL)
		print_json(&n);
	else
		print_text(&n);
	return CLI_EXIT_OK;
}

int cmd_selftest(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {{"wait", false, NULL}, {NULL, false, NULL}};
	struct vsp_node_info n;
	int rc;

	args_parse("selftest", argc, argv, opts, NULL, 0, false, NULL, NULL);
	rc = ask(endpoint, VSP_SELFTEST, &n);
	if (rc != CLI_EXIT_OK)
		return rc;
	if (opts[0].value == NULL) {
		printf("self-test started\n");
		return CLI_EXIT_OK;
	}
	for (int i = 0; i < WAIT_LIMIT_S * 1000000 / WAIT_POLL_US; i++) {
		usleep(WAIT_POLL_US);
		rc = ask(endpoint, VSP_INFO, &n);
		if (rc != CLI_EXIT_OK)
			return rc;
		if (n.selftest != VSP_SELFTEST_RUNNING) {
			print_text(&n);
			return n.selftest == VSP_SELFTEST_DONE ? CLI_EXIT_OK : CLI_EXIT_FAIL;
		}
	}
	fprintf(stderr, "vschedctl: selftest: still running after %d s\n", WAIT_LIMIT_S);
	return CLI_EXIT_FAIL;
}
