/*
 * Earliest-deadline-first selection for one CPU (DESIGN.md §2, papers/004 Sect. 3).
 *
 * Model: a reservation (T = period, S = slice, D = deadline <= T, phase) releases a job at
 * epoch + phase + k*T for k = 0, 1, ...; the job may run while release <= now < release + D
 * and is owed S ns of CPU time in that window. At any instant EDF runs, among the released,
 * unfinished jobs whose window is open, the one with the earliest absolute deadline (ties:
 * lowest index, so the choice is deterministic). EDF meets every deadline on a CPU whose
 * jobs need, in every interval, no more than its length (processor demand); admission.c
 * admits only such sets (and keeps Σ S / T below the cap).
 *
 * Everything here is pure: no clock reads, no allocation, no I/O — safe in a dispatcher.
 * Times are 64-bit monotonic ns compared wrap-safe (mono_before); periods up to days do
 * not overflow because only differences and one multiplication k*T <= now - first are used.
 */
#include "vsched.h"

/* Far enough to mean "no event", close enough to stay ordered under wrap-safe compare. */
#define EDF_NO_EVENT (1ULL << 62)

void edf_window(const struct vsp_resv *r, mono_ns epoch, mono_ns now, struct edf_job *j)
{
	uint64_t d = r->deadline ? r->deadline : r->period;
	mono_ns first = epoch + r->phase;
	mono_ns release = first;

	/* Not yet released: the first window, in the future. Otherwise the one holding now. */
	if (!mono_before(now, first) && r->period > 0)
		release = first + (now - first) / r->period * r->period;
	j->release = release;
	j->deadline = release + d;
	j->next_release = release + r->period;
	j->remaining = r->slice;
	j->runnable = true;
}

/* Released, window still open, budget left: EDF may run it at now. */
static bool edf_eligible(const struct edf_job *j, mono_ns now)
{
	return j->runnable && j->remaining > 0 && !mono_before(now, j->release) &&
	       mono_before(now, j->deadline);
}

bool edf_before(const struct edf_job *a, const struct edf_job *b)
{
	return a->spare != b->spare ? b->spare : mono_before(a->deadline, b->deadline);
}

int edf_select(const struct edf_job *j, int n, mono_ns now)
{
	int best = -1;

	for (int i = 0; i < n; i++) {
		if (!edf_eligible(&j[i], now))
			continue;
		/* Strictly before only: ties keep the lowest index. */
		if (best < 0 || edf_before(&j[i], &j[best]))
			best = i;
	}
	return best;
}

/* Lowers *next to t when t is after now and before *next. */
static void consider(mono_ns *next, mono_ns t, mono_ns now)
{
	if (mono_before(now, t) && mono_before(t, *next))
		*next = t;
}

/*
 * Jobs that are not runnable (exited tasks) produce no events. When nothing is pending the
 * result is now + 2^62 ns (about 146 years): sleep until woken.
 */
mono_ns edf_next_event(const struct edf_job *j, int n, mono_ns now, int sel)
{
	mono_ns next = now + EDF_NO_EVENT;

	for (int i = 0; i < n; i++) {
		if (!j[i].runnable)
			continue;
		consider(&next, j[i].release, now);
		consider(&next, j[i].next_release, now);
		consider(&next, j[i].deadline, now);
	}
	if (sel >= 0 && sel < n && j[sel].remaining > 0)
		consider(&next, now + j[sel].remaining, now);
	return next;
}

/*
 * A task with several windows is one entry in the CPU's EDF order: its eligible window
 * with the earliest deadline. The windows of one task are disjoint, so at most one is open
 * at a time in practice; taking the earliest deadline keeps the rule exact anyway.
 */
int edf_task_entry(const struct edf_job *w, int n, mono_ns now, struct edf_job *out)
{
	int sel = edf_select(w, n, now);
	mono_ns ev = edf_next_event(w, n, now, -1);

	if (sel >= 0) {
		*out = w[sel];
	} else {
		out->release = ev;
		out->deadline = ev;
		out->remaining = 0;
		out->spare = false;
		out->runnable = n > 0 && w[0].runnable;
	}
	out->next_release = ev;
	return sel;
}
