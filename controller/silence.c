/*
 * Silent jobs. A floating job evaluates whole application reports; a job given a U so small
 * that it completes no iteration sends none, so no evaluation would ever correct its U. When
 * none of a job's ranks has reported for long (rank_silent_at(): many of its usual gaps, at
 * least 10 s) and its constraint is at least that old, control_on_silence() lifts a U below
 * the target to the target. Once per constraint generation: a job still silent at its target
 * is hung or waiting, not starved, and the listing says which rank is silent (listing.c).
 */
#include "controller.h"

#include "log.h"

#define TXN_RECHECK (1 * NSEC_PER_SEC) /* a silent job with a transaction open: again then */

/* A job whose U silence could lift: floating, past calibration, below its target, not yet
 * tried at this constraint. */
static bool candidate(const struct job *jb)
{
	const struct control_job *cj = &jb->control.loop;

	return cj->p.algo == CONTROL_ALGO_FLOATING && cj->state != CONTROL_CALIBRATING &&
	       jb->control.target_pct > 0 && cj->cur_u_pct < jb->control.target_pct &&
	       jb->control.silence_gen != cj->gen;
}

/* When the whole job is silent: every rank that has reported is, and the constraint is
 * RANK_SILENT_MIN_NS old; *last: the newest report. 0: no rank has reported. */
static mono_ns job_silent_at(const struct job *jb, mono_ns *last)
{
	mono_ns at = jb->control.loop.gen_start + RANK_SILENT_MIN_NS;

	*last = 0;
	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		mono_ns t = rank_silent_at(rk);
		if (!t)
			continue;
		at = mono_before(at, t) ? t : at;
		*last = mono_before(*last, rk->last_report) ? rk->last_report : *last;
	}
	return *last ? at : 0;
}

/* Lifts U for the job silent since `last`; once per constraint whatever the answer. */
static void rescue(struct ctld *d, struct job *jb, mono_ns last, mono_ns now)
{
	struct control_job *cj = &jb->control.loop;
	struct control_decision dec;
	double u = cj->cur_u_pct;
	int rc = control_on_silence(cj, now, &dec);

	jb->control.silence_gen = cj->gen; /* the new generation when it acted */
	if (rc != 0)
		return;
	log_info("job %s: no progress report for %.0f s at U %.2f %%: U raised to %.1f %% "
	         "(its target)",
	         jb->name, (double)(now - last) / NSEC_PER_SEC, u, cj->cur_u_pct);
	decide_apply(d, jb, &dec, now);
}

/*
 * Scans every job's ranks only when one may be due: at the earliest silent time the last
 * scan found, and at least every RANK_SILENT_MIN_NS. That is exact: what happens between
 * scans only makes a job due RANK_SILENT_MIN_NS after it or later (a report moves its rank's
 * time later; a new constraint or a first report starts the minimum again).
 */
void silence_tick(struct ctld *d, mono_ns now)
{
	mono_ns next = now + RANK_SILENT_MIN_NS;

	if (d->silence_scan && mono_before(now, d->silence_due))
		return;
	d->silence_scan = now;
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		mono_ns at, last;

		if (!candidate(jb) || !(at = job_silent_at(jb, &last)))
			continue;
		if (mono_before(now, at) || jb->txn.active) {
			at = mono_before(now, at) ? at : now + TXN_RECHECK;
			next = mono_before(at, next) ? at : next;
			continue;
		}
		rescue(d, jb, last, now);
	}
	d->silence_due = next;
}

mono_ns silence_next(const struct ctld *d)
{
	if (d->njobs == 0)
		return 0;
	return d->silence_scan ? d->silence_due : 1; /* never scanned: due now */
}
