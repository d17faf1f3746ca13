/*
 * bsp: main and the iteration loop of one rank (see bsp.h, docs/apps.md).
 *
 * An iteration: compute (CPU time), then one all-to-all round. The round is also where the
 * ranks agree to stop: --iterations is known to all; for --duration each rank sets the STOP
 * flag in its header once its own clock says so, and since every rank sees every header of
 * the round, all of them stop after the same round.
 *
 * Output: one summary line per rank on stdout (key=value, for people and scripts), with -v
 * one progress line per second; errors one line on stderr, exit 1.
 */
#include "bsp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct totals {
	uint64_t iterations;
	uint64_t compute_ns;     /* wall time in the compute phase */
	uint64_t compute_cpu_ns; /* CPU time in the compute phase */
	uint64_t comm_ns;        /* wall time in the exchange (incl. waiting for peers) */
	uint64_t wall_ns;        /* first iteration start to last iteration end */
};

static void print_summary(const struct bsp_cfg *c, const struct bsp_net *n, const struct totals *t,
                          apprate_t *r)
{
	double k = t->iterations ? (double)t->iterations : 1.0;
	double phase = (double)(t->compute_ns + t->comm_ns);
	struct apprate_stats st = {0};
	char line[1024];
	int len;

	apprate_stats(r, &st);
	len = snprintf(line, sizeof(line),
	               "bsp: rank=%u ranks=%u iterations=%llu seconds=%.3f rate=%.3f "
	               "compute_ms=%.3f compute_cpu_ms=%.3f comm_ms=%.3f comm_pct=%.1f",
	               c->rank, c->nranks, (unsigned long long)t->iterations, app_sec(t->wall_ns),
	               t->wall_ns ? (double)t->iterations / app_sec(t->wall_ns) : 0.0,
	               (double)t->compute_ns / k / 1e6, (double)t->compute_cpu_ns / k / 1e6,
	               (double)t->comm_ns / k / 1e6,
	               phase > 0 ? 100.0 * (double)t->comm_ns / phase : 0.0);
	if (c->ratio && len > 0 && (size_t)len < sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, " asked_comm_pct=%.1f",
		                100.0 * c->ratio_m / ((double)c->ratio_c + c->ratio_m));
	if (len > 0 && (size_t)len < sizeof(line))
		snprintf(line + len, sizeof(line) - (size_t)len,
		         " asked_compute_ms=%.3f msg=%llu msgs_sent=%llu msgs_recv=%llu "
		         "bytes_sent=%llu bytes_recv=%llu reports=%llu",
		         (double)c->compute_ns / 1e6, (unsigned long long)c->msg,
		         (unsigned long long)n->msgs_sent, (unsigned long long)n->msgs_recv,
		         (unsigned long long)n->bytes_sent, (unsigned long long)n->bytes_recv,
		         (unsigned long long)st.reports_sent);
	printf("%s\n", line);
	fflush(stdout);
}

/* The iteration loop. Returns 0, or -1 after printing why. */
static int iterate(const struct bsp_cfg *c, struct bsp_net *n, struct spin *sp, apprate_t *r,
                   struct stamps *st, struct totals *t)
{
	mono_ns start = mono_now(), last_print = start;
	uint64_t last_iters = 0;

	for (;;) {
		mono_ns t0 = mono_now(), t1, t2;
		uint64_t c0 = app_thread_cpu_ns(), c1;
		uint64_t sent0 = n->bytes_sent + n->bytes_recv;
		uint32_t flags = 0, all = 0;

		if (!spin_run(sp, c->compute_ns)) {
			fprintf(stderr,
			        "bsp: rank %u: interrupted by signal %d in iteration %llu\n",
			        c->rank, (int)app_stop, (unsigned long long)t->iterations);
			return -1;
		}
		t1 = mono_now();
		c1 = app_thread_cpu_ns();
		if (c->duration_ns != 0 && !mono_before(t1, start + c->duration_ns))
			flags |= BSP_F_STOP;
		if (net_exchange(n, c->msg, flags, 0, &all, NULL) != 0)
			return -1;
		t2 = mono_now();

		t->iterations++;
		t->compute_ns += t1 - t0;
		t->compute_cpu_ns += c1 - c0;
		t->comm_ns += t2 - t1;
		t->wall_ns = t2 - start;
		apprate_iteration(r);
		apprate_bytes(r, 0, n->bytes_sent + n->bytes_recv - sent0);
		stamps_add(st, t2);

		if (c->verbose && t2 - last_print >= NSEC_PER_SEC) {
			printf("bsp: rank=%u t=%.3f iterations=%llu rate=%.3f\n", c->rank,
			       app_sec(t2 - start), (unsigned long long)t->iterations,
			       (double)(t->iterations - last_iters) / app_sec(t2 - last_print));
			fflush(stdout);
			last_print = t2;
			last_iters = t->iterations;
		}
		if ((all & BSP_F_STOP) || (c->iterations != 0 && t->iterations >= c->iterations))
			return 0;
	}
}

static int run_rank(struct bsp_cfg *c)
{
	struct totals t = {0};
	struct bsp_net n;
	struct spin sp;
	struct stamps *st = NULL;
	apprate_t *r;
	int rc = APP_EXIT_FAIL;

	spin_init(&sp, c->spin);
	r = app_apprate_open(c->job);
	if (net_setup(&n, c) != 0) {
		apprate_close(&r);
		return APP_EXIT_FAIL;
	}
	if (c->ratio && ratio_calibrate(&n, c, &sp) != 0)
		goto out;
	net_reset_counters(&n);
	st = c->rank == 0 ? stamps_open(c->stamps) : NULL;
	if (iterate(c, &n, &sp, r, st, &t) != 0)
		goto out;
	rc = APP_EXIT_OK;
	print_summary(c, &n, &t, r);
out:
	stamps_close(&st);
	net_close(&n);
	apprate_close(&r);
	return rc;
}

int main(int argc, char **argv)
{
	struct bsp_cfg c;
	int rc;

	app_name = "bsp";
	bsp_parse(argc, argv, &c);
	(void)spin_given_ns_per_loop(); /* a bad value is a usage error, before any fork */
	app_signals();
	if (c.local > 0) {
		char self[4096];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (len <= 0) {
			fprintf(stderr, "bsp: cannot find my own executable: %s\n",
			        len < 0 ? strerror(errno) : "empty path");
			return APP_EXIT_FAIL;
		}
		self[len] = '\0';
		return launch_local(&c, self);
	}
	rc = run_rank(&c);
	bsp_cfg_free(&c);
	return rc;
}
