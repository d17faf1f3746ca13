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

/* A job whose U silence could lift: floating, past calibration, below its target, no
 * transaction open, not yet tried at this constraint. */
static bool candidate(const struct job *jb)
{
	const struct control_job *cj = &jb->control.loop;

	return cj->p.algo == CONTROL_ALGO_FLOATING && cj->state != CONTROL_CALIBRATING &&
	       jb->control.target_pct > 0 && cj->cur_u_pct < jb->control.target_pct &&
	       !jb->txn.active && jb->control.silence_gen != cj->gen;
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

void silence_tick(struct ctld *d, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct control_job *cj = &jb->control.loop;
		struct control_decision dec;
		mono_ns at, last;

		if (!candidate(jb) || !(at = job_silent_at(jb, &last)) || mono_before(now, at))
			continue;
		jb->control.silence_gen = cj->gen;
		double u = cj->cur_u_pct;
		if (control_on_silence(cj, now, &dec) != 0)
			continue;
		log_info("job %s: no progress report for %.0f s at U %.2f %%: U raised to %.1f %% "
		         "(its target)",
		         jb->name, (double)(now - last) / NSEC_PER_SEC, u, cj->cur_u_pct);
		jb->control.silence_gen = cj->gen;
		decide_apply(d, jb, &dec, now);
	}
}

mono_ns silence_next(const struct ctld *d)
{
	mono_ns next = 0;

	for (int j = 0; j < d->njobs; j++) {
		mono_ns t, last;
		if (!candidate(d->jobs[j]) || !(t = job_silent_at(d->jobs[j], &last)))
			continue;
		if (next == 0 || mono_before(t, next))
			next = t;
	}
	return next;
}
