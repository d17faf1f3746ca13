/*
 * Output of `vschedctl task list`: a table that fits 80 columns for people, and a JSON
 * array for scripts. Both list the tasks sorted by pid, so two listings can be compared.
 *
 *   U%      = slice / period (the reservation; with windows Σ slice / period, SLICE = Σ slice,
 *             and a second line lists the windows as PHASE+LENGTH/SLICE)
 *   SHARE%  = cpu_ns / managed_ns (what the task actually received since it was added)
 *   MAXLATE = largest CPU time still owed at a missed deadline, shown to the microsecond
 */
#include "vschedctl.h"

#include <stdio.h>
#include <stdlib.h>

#include "duration.h"

static int by_pid(const void *a, const void *b)
{
	const struct vsp_task_stat *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static unsigned nwin(const struct vsp_task_stat *t)
{
	return t->nwin >= 1 && t->nwin <= VSP_MAX_WINDOWS ? t->nwin : 1;
}

/* Window i of t (window 1 is resv, also when the decoder did not fill win[]). */
static const struct vsp_resv *win(const struct vsp_task_stat *t, unsigned i)
{
	return i == 0 ? &t->resv : &t->win[i];
}

static uint64_t slice_sum(const struct vsp_task_stat *t)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < nwin(t); i++)
		s += win(t, i)->slice;
	return s;
}

static double util_pct(const struct vsp_task_stat *t)
{
	return t->resv.period > 0 ? 100.0 * (double)slice_sum(t) / (double)t->resv.period : 0.0;
}

static double share_pct(const struct vsp_task_stat *t)
{
	return t->managed_ns > 0 ? 100.0 * (double)t->cpu_ns / (double)t->managed_ns : 0.0;
}

static const char *park_name(uint8_t park)
{
	return vsp_park_name(park);
}

void output_table(FILE *f, struct vsp_task_stat *t, uint32_t n)
{
	/* 7+3+8+8+5+4+7+8+6+6+8 characters and 10 blanks: 79 columns */
	char period[32], slice[32], late[32];

	if (n > 1)
		qsort(t, n, sizeof(*t), by_pid);
	fprintf(f, "%7s %3s %8s %8s %5s %4s %7s %8s %6s %6s %8s\n", "PID", "CPU", "PERIOD", "SLICE",
	        "U%", "PARK", "PERIODS", "CPU(s)", "SHARE%", "MISSES", "MAXLATE");
	for (uint32_t i = 0; i < n; i++) {
		/* lateness is a measurement: to the microsecond is all a person needs */
		uint64_t late_us = (t[i].lateness_max_ns + 500) / 1000 * 1000;

		fprintf(f, "%7d %3d %8s %8s %5.1f %4s %7llu %8.2f %6.1f %6llu %8s\n", (int)t[i].pid,
		        (int)t[i].cpu, duration_format(t[i].resv.period, period, sizeof(period)),
		        duration_format(slice_sum(&t[i]), slice, sizeof(slice)), util_pct(&t[i]),
		        park_name(t[i].park), (unsigned long long)t[i].periods,
		        (double)t[i].cpu_ns / 1e9, share_pct(&t[i]),
		        (unsigned long long)t[i].misses,
		        duration_format(late_us, late, sizeof(late)));
		if (t[i].anchor == VSP_ANCHOR_WAKEUP)
			fprintf(f, "%7s anchor wakeup (jobs start when the task wakes up)\n", "");
		if (nwin(&t[i]) > 1) {
			char ph[32], len[32], sl[32];

			fprintf(f, "%7s windows", "");
			for (unsigned k = 0; k < nwin(&t[i]); k++) {
				const struct vsp_resv *w = win(&t[i], k);
				fprintf(f, " %s+%s/%s", duration_format(w->phase, ph, sizeof(ph)),
				        duration_format(w->deadline, len, sizeof(len)),
				        duration_format(w->slice, sl, sizeof(sl)));
			}
			fputc('\n', f);
		}
	}
}

void output_json(FILE *f, struct vsp_task_stat *t, uint32_t n)
{
	if (n > 1)
		qsort(t, n, sizeof(*t), by_pid);
	fputc('[', f);
	for (uint32_t i = 0; i < n; i++) {
		const struct vsp_task_stat *x = &t[i];

		fprintf(f,
		        "%s\n  {\"pid\": %d, \"cpu\": %d, \"park\": \"%s\", \"anchor\": \"%s\", "
		        "\"threads\": %u, "
		        "\"period_ns\": %llu, \"slice_ns\": %llu, \"deadline_ns\": %llu, "
		        "\"phase_ns\": %llu, \"util_pct\": %.3f, \"managed_ns\": %llu, "
		        "\"periods\": %llu, \"cpu_ns\": %llu, \"share_pct\": %.3f, "
		        "\"misses\": %llu, \"lateness_total_ns\": %llu, "
		        "\"lateness_max_ns\": %llu, \"windows\": [",
		        i > 0 ? "," : "", (int)x->pid, (int)x->cpu, park_name(x->park),
		        vsp_anchor_name(x->anchor), (unsigned)x->nthreads,
		        (unsigned long long)x->resv.period, (unsigned long long)x->resv.slice,
		        (unsigned long long)x->resv.deadline, (unsigned long long)x->resv.phase,
		        util_pct(x), (unsigned long long)x->managed_ns,
		        (unsigned long long)x->periods, (unsigned long long)x->cpu_ns, share_pct(x),
		        (unsigned long long)x->misses, (unsigned long long)x->lateness_total_ns,
		        (unsigned long long)x->lateness_max_ns);
		/* every window, window 1 included (its fields are also the top-level ones) */
		for (unsigned k = 0; k < nwin(x); k++) {
			const struct vsp_resv *w = win(x, k);
			fprintf(f,
			        "%s{\"phase_ns\": %llu, \"deadline_ns\": %llu, \"slice_ns\": %llu, "
			        "\"period_ns\": %llu}",
			        k > 0 ? ", " : "", (unsigned long long)w->phase,
			        (unsigned long long)w->deadline, (unsigned long long)w->slice,
			        (unsigned long long)w->period);
		}
		fputs("]}", f);
	}
	fputs(n > 0 ? "\n]\n" : "]\n", f);
}
