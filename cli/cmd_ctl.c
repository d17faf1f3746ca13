/*
 * vschedctl rate | job list|show|set | node list | top: the commands that talk to
 * vsched-controller over its admin endpoint (see ctladmin.h). Command-line values are
 * checked for form here (a number, a duration); ranges and names are the controller's to
 * judge, and its one-line reason is printed as "vschedctl: rate JOB: reason" with exit 1.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "ctladmin.h"
#include "dashboard.h"
#include "duration.h"
#include "timeutil.h"
#include "vschedctl.h"
#include "zreq.h"

#define LIST_TIMEOUT_MS   3000
#define CHANGE_TIMEOUT_MS 10000 /* the controller answers after every node acknowledged */
#define BUSY_RETRIES      30    /* EBUSY: another change of the job is being applied */
#define MAX_REPLY         (64 * 1024 * 1024)

const char *ctladmin_endpoint = CTL_DEFAULT_CONTROLLER;
const struct zreq_curve *ctladmin_curve;

void ctladmin_usage(FILE *f)
{
	fputs("  rate JOB PERCENT                    set a job's target (% of its full speed)\n"
	      "  job list [--json]\n"
	      "  job show JOB [--json]\n"
	      "  job set JOB [--algorithm floating|adaptive|linear] [--aggregate slowest|mean]\n"
	      "              [--epsilon POINTS] [--rmax UNITS_PER_S (0: measure)] [--u-max PCT]\n"
	      "              [--delta-period DUR] [--min-period DUR] [--min-slice DUR]\n"
	      "              [--initial-period DUR]\n"
	      "  node list [--json]\n"
	      "  top [--once] [--interval DUR]       the dashboard\n"
	      "CONTROLLER: -C, else $" CTL_CONTROLLER_ENV ", else " CTL_DEFAULT_CONTROLLER ".\n",
	      f);
}

int ctladmin_request(const char *endpoint, const struct padm_request *q, struct padm_reply *rep,
                     int timeout_ms, int quiet)
{
	uint8_t buf[PADM_MAX_REQUEST];
	char why[256] = "";
	zmq_msg_t msg;
	int len, rc;

	memset(rep, 0, sizeof(*rep));
	len = padm_encode_request(q, buf, sizeof(buf));
	if (len < 0) {
		fprintf(stderr, "vschedctl: cannot encode the request: %s\n", strerror(-len));
		return CLI_EXIT_FAIL;
	}
	rc = zreq_exchange(endpoint, ctladmin_curve, buf, (size_t)len, timeout_ms, MAX_REPLY, &msg,
	                   why, sizeof(why));
	if (rc == ZREQ_NOANSWER) {
		if (!quiet && why[0] == '\0')
			fprintf(stderr,
			        "vschedctl: no answer from %s (is vsched-controller running?)\n",
			        endpoint);
		else if (!quiet)
			fprintf(stderr, "vschedctl: %s\n", why);
		return CLI_EXIT_NOANSWER;
	}
	if (rc != ZREQ_OK) {
		fprintf(stderr, "vschedctl: %s\n", why);
		return rc == ZREQ_BADENDPOINT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	rc = padm_decode_reply(zmq_msg_data(&msg), zmq_msg_size(&msg), rep, why, sizeof(why));
	zmq_msg_close(&msg);
	if (rc != 0) {
		fprintf(stderr, "vschedctl: bad reply from %s: %s\n", endpoint, why);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/*
 * A request whose refusal is reported as "vschedctl: WHAT: reason" (exit 1). Retries a
 * while when the controller is busy applying another change of the same job.
 */
static int exchange(const char *endpoint, const char *what, const struct padm_request *q,
                    struct padm_reply *rep, int timeout_ms)
{
	for (int attempt = 0;; attempt++) {
		int rc = ctladmin_request(endpoint, q, rep, timeout_ms, 0);

		if (rc != 0)
			return rc;
		if (rep->status == -EBUSY && attempt < BUSY_RETRIES) {
			padm_reply_release(rep);
			nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
			continue;
		}
		if (rep->status != 0) {
			fprintf(stderr, "vschedctl: %s: %s\n", what,
			        rep->reason[0] ? rep->reason : strerror(-rep->status));
			return CLI_EXIT_FAIL;
		}
		return CLI_EXIT_OK;
	}
}

static void job_name_arg(const char *cmd, const char *s, char *out)
{
	if (!text_name_ok(s))
		args_fail(cmd, "JOB '%s': must be 1..%d printable characters without blanks", s,
		          PADM_NAME_MAX);
	snprintf(out, PADM_NAME_MAX + 1, "%s", s);
}

/* A decimal number, optionally followed by '%'. Exits 2 when it is not one. */
static double number_arg(const char *cmd, const char *what, const char *s, bool pct)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (pct && end != s && *end == '%')
		end++;
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || strspn(s, " \t") > 0 ||
	    strpbrk(s, "xXpPnNiI") != NULL)
		args_fail(cmd, "%s '%s': not a number", what, s);
	return v;
}

int cmd_rate(const char *controller, int argc, char **argv)
{
	struct cli_opt opts[] = {{NULL, false, NULL}};
	struct padm_request q = {.type = PADM_SET_RATE};
	struct padm_reply rep;
	const char *pos[2];
	char what[PADM_NAME_MAX + 16];
	double v;
	int rc;

	if (args_parse("rate", argc, argv, opts, pos, 2, false, NULL, NULL) != 2)
		args_fail("rate", "usage: rate JOB PERCENT");
	job_name_arg("rate", pos[0], q.job);
	v = number_arg("rate", "PERCENT", pos[1], true);
	/* the range (0, 100] is the controller's to refuse, with its reason; only keep the
	 * value representable */
	if (v > 2e6)
		v = 2e6;
	if (v < -2e6)
		v = -2e6;
	q.target_milli = (int32_t)(v * 1000.0 + (v >= 0 ? 0.5 : -0.5));
	if (q.target_milli == 0 && v != 0)
		q.target_milli = v > 0 ? 1 : -1; /* 0.0001 is not 0: let the controller judge */
	snprintf(what, sizeof(what), "rate %s", q.job);
	rc = exchange(controller, what, &q, &rep, CHANGE_TIMEOUT_MS);
	if (rc == CLI_EXIT_OK)
		printf("%s\n", rep.reason);
	padm_reply_release(&rep);
	return rc;
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < ' ')
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void json_job(FILE *f, const struct padm_job *j, const char *indent)
{
	fprintf(f, "%s{\"name\": ", indent);
	json_str(f, j->name);
	fprintf(f,
	        ", \"state\": \"%s\", \"algorithm\": \"%s\", \"aggregate\": \"%s\", "
	        "\"ranks\": %u, \"nodes\": %u, \"target_pct\": ",
	        padm_state_name(j->state), padm_algo_name(j->algo), padm_agg_name(j->agg),
	        j->nranks, j->nnodes);
	json_num(f, j->target_milli > 0 ? j->target_milli / 1000.0 : NAN);
	fputs(", \"current_pct\": ", f);
	json_num(f, j->current_pct);
	fputs(", \"err_pct\": ", f);
	json_num(f, j->err_pct);
	fputs(", \"r_max\": ", f);
	json_num(f, j->flags & PADM_JF_RMAX_KNOWN ? j->r_max : NAN);
	fprintf(f, ", \"r_max_source\": \"%s\", \"epsilon_pct\": ",
	        j->flags & PADM_JF_RMAX_GIVEN   ? "given"
	        : j->flags & PADM_JF_RMAX_KNOWN ? "measured"
	                                        : "unknown");
	json_num(f, j->eps_pct);
	fprintf(f, ", \"period_ns\": %llu, \"slice_ns\": %llu, \"util_pct\": ",
	        (unsigned long long)j->period, (unsigned long long)j->slice);
	json_num(f, j->period ? 100.0 * (double)j->slice / (double)j->period : NAN);
	fprintf(
	    f,
	    ", \"delta_period_ns\": %llu, \"min_period_ns\": %llu, \"min_slice_ns\": %llu, "
	    "\"initial_period_ns\": %llu, \"gen\": %llu, \"pending\": %s, \"progress_signal\": %s, "
	    "\"mem_bps\": %llu, \"net_bps\": %llu, \"class\": \"%s\", \"misses\": %llu, "
	    "\"evaluations\": %llu, \"changes\": %llu, \"reason\": ",
	    (unsigned long long)j->delta_period, (unsigned long long)j->min_period,
	    (unsigned long long)j->min_slice, (unsigned long long)j->initial_period,
	    (unsigned long long)j->gen, j->flags & PADM_JF_PENDING ? "true" : "false",
	    j->flags & PADM_JF_NO_SIGNAL ? "false" : "true", (unsigned long long)j->mem_bps,
	    (unsigned long long)j->net_bps, padm_class_name(j->klass),
	    (unsigned long long)j->misses, (unsigned long long)j->evaluations,
	    (unsigned long long)j->changes);
	json_str(f, j->reason);
	fputs(", \"u_pct\": ", f);
	json_num(f, j->u_pct);
	fputs(", \"efficiency\": ", f);
	json_num(f, j->eff);
	fputs(", \"need_u_pct\": ", f);
	json_num(f, j->need_u_pct);
	fputs(", \"u_max_pct\": ", f);
	json_num(f, j->u_max_pct);
	fprintf(f, ", \"floor_ns\": %llu", (unsigned long long)j->floor);
}

static void json_node(FILE *f, const struct padm_node *n)
{
	fputs("  {\"name\": ", f);
	json_str(f, n->name);
	fprintf(f, ", \"up\": %s, \"cpus\": %u, \"procs\": %u, \"jobs\": %u, \"sum_u\": ",
	        n->up ? "true" : "false", n->ncpus, n->nprocs, n->njobs);
	json_num(f, n->sum_u);
	fprintf(f,
	        ", \"mem_used_bps\": %llu, \"mem_capacity_bps\": %llu, \"mem_source\": %u, "
	        "\"net_used_bps\": %llu, \"net_capacity_bps\": %llu, \"net_source\": %u, "
	        "\"floor_ns\": %llu, \"dropped_msgs\": %llu, \"cpu_cap_pct\": ",
	        (unsigned long long)n->mem_used, (unsigned long long)n->mem_cap, n->mem_src,
	        (unsigned long long)n->net_used, (unsigned long long)n->net_cap, n->net_src,
	        (unsigned long long)n->floor, (unsigned long long)n->dropped);
	if (n->cap_ppm)
		fprintf(f, "%.4f", n->cap_ppm / 1e4);
	else
		fputs("null", f);
	fputs(", \"last_heartbeat_ms\": ", f);
	if (n->hb_age_ms == UINT64_MAX)
		fputs("null}", f);
	else
		fprintf(f, "%llu}", (unsigned long long)n->hb_age_ms);
}

/* ---- job ---- */

int cmd_job_list(const char *vsched_endpoint, int argc, char **argv)
{
	const char *controller = ctladmin_endpoint;

	struct cli_opt opts[] = {{"json", false, NULL}, {NULL, false, NULL}};
	struct padm_request q = {.type = PADM_JOB_LIST};
	struct padm_reply rep;
	int rc;

	args_parse("job list", argc, argv, opts, NULL, 0, false, NULL, NULL);
	rc = exchange(controller, "job list", &q, &rep, LIST_TIMEOUT_MS);
	if (rc == CLI_EXIT_OK && opts[0].value != NULL) {
		fputc('[', stdout);
		for (uint16_t i = 0; i < rep.njobs; i++) {
			fputs(i ? ",\n" : "\n", stdout);
			json_job(stdout, &rep.jobs[i], "  ");
			fputc('}', stdout);
		}
		fputs(rep.njobs ? "\n]\n" : "]\n", stdout);
	} else if (rc == CLI_EXIT_OK) {
		dash_jobs(stdout, &rep);
	}
	padm_reply_release(&rep);
	return rc;
}

/* Slot records [i, end) with the same (slot, node) as record i. */
static uint16_t slot_group_end(const struct padm_reply *rep, uint16_t i)
{
	uint16_t e = i + 1;
	while (e < rep->nslots && rep->slots[e].slot == rep->slots[i].slot &&
	       strcmp(rep->slots[e].node, rep->slots[i].node) == 0)
		e++;
	return e;
}

/* The co-scheduling part of `job show` (coschedule mode). */
static void show_plan_text(const struct padm_reply *rep)
{
	const struct padm_plan *p = &rep->plan;
	char a[32], b[32], c[32], d[32];

	if (!(p->flags & PADM_PF_ON))
		return;
	if (!(p->flags & PADM_PF_PLANNED)) {
		printf("  co-scheduling: not in the plan (no target, R_max unknown, or no rank "
		       "on an up node)\n");
		return;
	}
	printf("  co-scheduling: %u of %u slots needed, every %u slots of %s (%u window-set(s) "
	       "per frame of %u slots)%s%s%s\n",
	       p->got, p->need, p->slots, duration_format(p->slot_ns, a, sizeof(a)),
	       p->frame_slots / p->slots, p->frame_slots,
	       p->flags & PADM_PF_COMPLETE ? "" : "; the plan is short of slots",
	       p->flags & PADM_PF_COLOURABLE ? "" : "; NOT pinnable to CPUs on some node",
	       p->flags & PADM_PF_MERGED ? "; windows merged to fit 8" : "");
	for (uint8_t w = 0; w < p->nwin; w++)
		printf("  window %u: phase %s slice %s deadline %s period %s\n", w + 1,
		       duration_format(p->win[w].phase, a, sizeof(a)),
		       duration_format(p->win[w].slice, b, sizeof(b)),
		       duration_format(p->win[w].deadline, c, sizeof(c)),
		       duration_format(p->win[w].period, d, sizeof(d)));
	if (rep->nslots == 0)
		return;
	printf("\n%5s %-12s %s\n", "SLOT", "NODE", "RUNNING (this job and its co-runners)");
	for (uint16_t i = 0; i < rep->nslots;) {
		uint16_t e = slot_group_end(rep, i);
		char nm[16];

		snprintf(nm, sizeof(nm), "%.12s", rep->slots[i].node);
		printf("%5u %-12s", rep->slots[i].slot, nm);
		for (uint16_t k = i; k < e; k++)
			printf(" %s", rep->slots[k].job);
		putchar('\n');
		i = e;
	}
}

static void show_plan_json(const struct padm_reply *rep)
{
	const struct padm_plan *p = &rep->plan;

	if (!(p->flags & PADM_PF_ON)) {
		fputs(", \"coschedule\": null", stdout);
		return;
	}
	printf(", \"coschedule\": {\"planned\": %s, \"frame_slots\": %u, \"slots\": %u, "
	       "\"slot_ns\": %llu, \"need\": %u, \"got\": %u, \"complete\": %s, "
	       "\"colourable\": %s, \"merged\": %s, \"windows\": [",
	       p->flags & PADM_PF_PLANNED ? "true" : "false", p->frame_slots, p->slots,
	       (unsigned long long)p->slot_ns, p->need, p->got,
	       p->flags & PADM_PF_COMPLETE ? "true" : "false",
	       p->flags & PADM_PF_COLOURABLE ? "true" : "false",
	       p->flags & PADM_PF_MERGED ? "true" : "false");
	for (uint8_t w = 0; w < p->nwin; w++)
		printf("%s{\"phase_ns\": %llu, \"slice_ns\": %llu, \"deadline_ns\": %llu, "
		       "\"period_ns\": %llu}",
		       w ? ", " : "", (unsigned long long)p->win[w].phase,
		       (unsigned long long)p->win[w].slice, (unsigned long long)p->win[w].deadline,
		       (unsigned long long)p->win[w].period);
	fputs("], \"slot_table\": [", stdout);
	for (uint16_t i = 0; i < rep->nslots;) {
		uint16_t e = slot_group_end(rep, i);

		printf("%s\n  {\"slot\": %u, \"node\": ", i ? "," : "", rep->slots[i].slot);
		json_str(stdout, rep->slots[i].node);
		fputs(", \"jobs\": [", stdout);
		for (uint16_t k = i; k < e; k++) {
			if (k > i)
				fputs(", ", stdout);
			json_str(stdout, rep->slots[k].job);
		}
		fputs("]}", stdout);
		i = e;
	}
	fputs(rep->nslots ? "\n]}" : "]}", stdout);
}

static void show_text(const struct padm_reply *rep)
{
	const struct padm_job *j = &rep->jobs[0];
	char a[32], b[32], c[32], d[32], e[32];

	printf("job %s: %s%s\n", j->name, padm_state_name(j->state),
	       j->flags & PADM_JF_PENDING ? " (constraint change being applied)" : "");
	if (j->reason[0])
		printf("  reason: %s\n", j->reason);
	if (j->target_milli > 0)
		printf("  target: %g%% of R_max", j->target_milli / 1000.0);
	else
		printf("  target: none");
	if (!isnan(j->current_pct))
		printf(", current %.1f%%, error %+.1f points\n", j->current_pct,
		       isnan(j->err_pct) ? 0.0 : j->err_pct);
	else if (j->flags & PADM_JF_NO_SIGNAL)
		printf(
		    ", no progress signal yet (%u rank%s registered, none has reported a unit)\n",
		    j->nranks, j->nranks == 1 ? "" : "s");
	else
		printf(", no rate reported yet\n");
	if (j->flags & PADM_JF_RMAX_KNOWN)
		printf("  R_max: %.6g units/s (%s)\n", j->r_max,
		       j->flags & PADM_JF_RMAX_GIVEN ? "given" : "measured");
	else
		printf("  R_max: unknown (being measured)\n");
	if (j->period)
		printf("  constraint: period %s slice %s (U %.1f%%), generation %llu\n",
		       duration_format(j->period, a, sizeof(a)),
		       duration_format(j->slice, b, sizeof(b)),
		       100.0 * (double)j->slice / (double)j->period, (unsigned long long)j->gen);
	else
		printf("  constraint: none (runs as the agents placed it)\n");
	if (!isnan(j->eff))
		printf("  efficiency: %.2f (rate %.1f%% for U %.1f%%: %s its share)\n", j->eff,
		       j->current_pct, j->u_pct,
		       j->eff > 1.005   ? "faster than"
		       : j->eff < 0.995 ? "slower than"
		                        : "at");
	if (!isnan(j->need_u_pct))
		printf("  needs U %.1f%% for its target (holds at most %g%%)\n", j->need_u_pct,
		       j->u_max_pct);
	if (j->floor)
		printf("  period floor of its nodes: %s\n",
		       duration_format(j->floor, a, sizeof(a)));
	printf(
	    "  algorithm: %s, aggregate: %s, epsilon %g points, U at most %g%%, delta period %s,\n"
	    "  smallest period %s, smallest slice %s, initial period %s\n",
	    padm_algo_name(j->algo), padm_agg_name(j->agg), j->eps_pct, j->u_max_pct,
	    duration_format(j->delta_period, a, sizeof(a)),
	    duration_format(j->min_period, b, sizeof(b)),
	    duration_format(j->min_slice, c, sizeof(c)),
	    duration_format(j->initial_period, d, sizeof(d)));
	printf("  ranks %u on %u node(s), iterations %llu, changes %llu, misses %llu, "
	       "memory %s MB/s, network %s MB/s, class %s\n",
	       j->nranks, j->nnodes, (unsigned long long)j->evaluations,
	       (unsigned long long)j->changes, (unsigned long long)j->misses,
	       dash_mbs(j->mem_bps, a, sizeof(a)), dash_mbs(j->net_bps, e, sizeof(e)),
	       padm_class_name(j->klass));
	if (rep->nranks == 0)
		return;
	printf("\n%5s %-12s %8s %4s %10s %6s %6s %6s %8s %8s\n", "RANK", "NODE", "PID", "UP",
	       "RATE/s", "PERIOD", "SLICE", "MISS", "MEM MB/s", "NET MB/s");
	for (uint16_t i = 0; i < rep->nranks; i++) {
		const struct padm_rank *k = &rep->ranks[i];
		char rate[32], nm[16];

		if (isnan(k->rate))
			snprintf(rate, sizeof(rate), "-");
		else
			snprintf(rate, sizeof(rate), "%.4g", k->rate);
		snprintf(nm, sizeof(nm), "%.12s", k->node);
		printf("%5u %-12s %8d %4s %10s %6s %6s %6s %8s %8s\n", k->rank, nm, (int)k->pid,
		       k->up ? "yes" : "no", rate, dash_dur(k->period, a, sizeof(a)),
		       dash_dur(k->slice, b, sizeof(b)), dash_count(k->misses, c, sizeof(c)),
		       dash_mbs(k->mem_bps, d, sizeof(d)), dash_mbs(k->net_bps, e, sizeof(e)));
	}
}

int cmd_job_show(const char *vsched_endpoint, int argc, char **argv)
{
	const char *controller = ctladmin_endpoint;

	struct cli_opt opts[] = {{"json", false, NULL}, {NULL, false, NULL}};
	struct padm_request q = {.type = PADM_JOB_SHOW};
	struct padm_reply rep;
	const char *pos[1];
	char what[PADM_NAME_MAX + 16];
	int rc;

	if (args_parse("job show", argc, argv, opts, pos, 1, false, NULL, NULL) != 1)
		args_fail("job show", "JOB is required");
	job_name_arg("job show", pos[0], q.job);
	snprintf(what, sizeof(what), "job show %s", q.job);
	rc = exchange(controller, what, &q, &rep, LIST_TIMEOUT_MS);
	if (rc == CLI_EXIT_OK && rep.njobs != 1) {
		fprintf(stderr, "vschedctl: %s: the controller sent no job record\n", what);
		rc = CLI_EXIT_FAIL;
	} else if (rc == CLI_EXIT_OK && opts[0].value != NULL) {
		json_job(stdout, &rep.jobs[0], "");
		fputs(", \"rank_list\": [", stdout);
		for (uint16_t i = 0; i < rep.nranks; i++) {
			const struct padm_rank *k = &rep.ranks[i];

			fprintf(stdout, "%s\n  {\"rank\": %u, \"node\": ", i ? "," : "", k->rank);
			json_str(stdout, k->node);
			fprintf(stdout, ", \"pid\": %d, \"up\": %s, \"rate\": ", (int)k->pid,
			        k->up ? "true" : "false");
			json_num(stdout, k->rate);
			fprintf(stdout,
			        ", \"period_ns\": %llu, \"slice_ns\": %llu, \"gen\": %llu, "
			        "\"misses\": %llu, \"mem_bps\": %llu, \"net_bps\": %llu}",
			        (unsigned long long)k->period, (unsigned long long)k->slice,
			        (unsigned long long)k->gen, (unsigned long long)k->misses,
			        (unsigned long long)k->mem_bps, (unsigned long long)k->net_bps);
		}
		fputs(rep.nranks ? "\n]" : "]", stdout);
		show_plan_json(&rep);
		fputs("}\n", stdout);
	} else if (rc == CLI_EXIT_OK) {
		show_text(&rep);
		show_plan_text(&rep);
	}
	padm_reply_release(&rep);
	return rc;
}

int cmd_job_set(const char *vsched_endpoint, int argc, char **argv)
{
	const char *controller = ctladmin_endpoint;

	struct cli_opt opts[] = {
	    {"algorithm", true, NULL}, {"aggregate", true, NULL},      {"epsilon", true, NULL},
	    {"rmax", true, NULL},      {"delta-period", true, NULL},   {"min-period", true, NULL},
	    {"min-slice", true, NULL}, {"initial-period", true, NULL}, {"u-max", true, NULL},
	    {NULL, false, NULL},
	};
	struct padm_request q = {.type = PADM_JOB_SET};
	struct padm_reply rep;
	const char *pos[1];
	char what[PADM_NAME_MAX + 16];
	const char *v;
	int rc;

	if (args_parse("job set", argc, argv, opts, pos, 1, false, NULL, NULL) != 1)
		args_fail("job set", "JOB is required");
	job_name_arg("job set", pos[0], q.job);
	if ((v = args_opt(opts, "algorithm")->value) != NULL) {
		if (padm_algo_parse(v, &q.algo) != 0)
			args_fail("job set",
			          "--algorithm '%s': must be floating, adaptive or linear", v);
		q.mask |= PADM_SET_ALGO;
	}
	if ((v = args_opt(opts, "aggregate")->value) != NULL) {
		if (padm_agg_parse(v, &q.agg) != 0)
			args_fail("job set", "--aggregate '%s': must be slowest or mean", v);
		q.mask |= PADM_SET_AGG;
	}
	if ((v = args_opt(opts, "epsilon")->value) != NULL) {
		double e = number_arg("job set", "--epsilon", v, false);
		if (e > 1e6 || e < -1e6)
			e = e > 0 ? 1e6 : -1e6;
		q.eps_milli = (int32_t)(e * 1000.0 + (e >= 0 ? 0.5 : -0.5));
		q.mask |= PADM_SET_EPS;
	}
	if ((v = args_opt(opts, "rmax")->value) != NULL) {
		q.r_max = number_arg("job set", "--rmax", v, false);
		q.mask |= PADM_SET_RMAX;
	}
	if ((v = args_opt(opts, "delta-period")->value) != NULL) {
		q.delta_period = args_duration("job set", "delta-period", v, false);
		q.mask |= PADM_SET_DELTA_PERIOD;
	}
	if ((v = args_opt(opts, "min-period")->value) != NULL) {
		q.min_period = args_duration("job set", "min-period", v, false);
		q.mask |= PADM_SET_MIN_PERIOD;
	}
	if ((v = args_opt(opts, "min-slice")->value) != NULL) {
		q.min_slice = args_duration("job set", "min-slice", v, false);
		q.mask |= PADM_SET_MIN_SLICE;
	}
	if ((v = args_opt(opts, "initial-period")->value) != NULL) {
		q.initial_period = args_duration("job set", "initial-period", v, false);
		q.mask |= PADM_SET_INITIAL_PERIOD;
	}
	if ((v = args_opt(opts, "u-max")->value) != NULL) {
		double u = number_arg("job set", "--u-max", v, false);
		if (!(u > 0 && u <= 100))
			args_fail("job set", "--u-max '%s': must be in (0, 100] percent of a CPU",
			          v);
		q.u_max_milli = (int32_t)(u * 1000.0 + 0.5);
		q.mask |= PADM_SET_U_MAX;
	}
	if (q.mask == 0)
		args_fail("job set", "nothing to set (see vschedctl --help)");
	snprintf(what, sizeof(what), "job set %s", q.job);
	rc = exchange(controller, what, &q, &rep, CHANGE_TIMEOUT_MS);
	if (rc == CLI_EXIT_OK)
		printf("%s\n", rep.reason);
	padm_reply_release(&rep);
	return rc;
}

/* ---- node ---- */

int cmd_node(const char *controller, int argc, char **argv)
{
	struct cli_opt opts[] = {{"json", false, NULL}, {NULL, false, NULL}};
	struct padm_request q = {.type = PADM_NODE_LIST};
	struct padm_reply rep;
	int rc;

	if (argc < 1 || strcmp(argv[0], "list") != 0)
		args_fail("node", "missing or unknown subcommand (list)");
	args_parse("node list", argc - 1, argv + 1, opts, NULL, 0, false, NULL, NULL);
	rc = exchange(controller, "node list", &q, &rep, LIST_TIMEOUT_MS);
	if (rc == CLI_EXIT_OK && opts[0].value != NULL) {
		fputc('[', stdout);
		for (uint16_t i = 0; i < rep.nnodes; i++) {
			fputs(i ? ",\n" : "\n", stdout);
			json_node(stdout, &rep.nodes[i]);
		}
		fputs(rep.nnodes ? "\n]\n" : "]\n", stdout);
	} else if (rc == CLI_EXIT_OK) {
		dash_nodes(stdout, &rep);
	}
	padm_reply_release(&rep);
	return rc;
}

/* ---- top ---- */

static volatile sig_atomic_t top_quit;

static void top_signal(int sig)
{
	(void)sig;
	top_quit = 1;
}

int cmd_top(const char *controller, int argc, char **argv)
{
	struct cli_opt opts[] = {
	    {"once", false, NULL}, {"interval", true, NULL}, {NULL, false, NULL}};
	struct padm_request q = {.type = PADM_STATUS};
	uint64_t interval = NSEC_PER_SEC;
	bool once;
	char title[160];
	struct sigaction sa;

	args_parse("top", argc, argv, opts, NULL, 0, false, NULL, NULL);
	once = opts[0].value != NULL;
	if (opts[1].value != NULL) {
		interval = args_duration("top", "interval", opts[1].value, false);
		if (interval < 100 * NSEC_PER_MSEC)
			args_fail("top", "--interval '%s': at least 100ms", opts[1].value);
	}
	snprintf(title, sizeof(title), "vsched %s", controller);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!top_quit) {
		struct padm_reply rep;
		char when[32];
		time_t t = time(NULL);
		struct tm tm;
		mono_ns next = mono_now() + interval;
		int rc = ctladmin_request(controller, &q, &rep, LIST_TIMEOUT_MS, !once);

		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		if (once) {
			if (rc == 0 && rep.status != 0) {
				fprintf(stderr, "vschedctl: top: %s\n", rep.reason);
				rc = CLI_EXIT_FAIL;
			} else if (rc == 0) {
				dash_render(stdout, &rep, title, when);
			}
			padm_reply_release(&rep);
			return rc;
		}
		fputs(DASH_ANSI_HOME_CLEAR, stdout);
		if (rc == 0 && rep.status == 0)
			dash_render(stdout, &rep, title, when);
		else
			printf("%s: no answer from the controller (retrying)   %s\n", controller,
			       when);
		fflush(stdout);
		padm_reply_release(&rep);
		while (!top_quit && mono_before(mono_now(), next)) {
			struct timespec ts = ns_to_ts(next);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	return CLI_EXIT_OK;
}
