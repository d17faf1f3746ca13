/*
 * Carrying out the control library's decisions: a changed (period, slice) becomes a
 * transaction on the job's nodes (txn.c) when it is a real reservation (U < 1); in
 * coschedule mode a decision only sets the job's U and granularity, which the plan turns
 * into windows (cosched.c). Called for decisions from the agents' reports (reports.c) and
 * from the capacity bounds (capacity.c); never while the job has a transaction open.
 */
#include "controller.h"

#include "log.h"

void decide_apply(struct ctld *d, struct job *jb, const struct control_decision *dec, mono_ns now)
{
	char rs[96];

	if (!dec->changed || jb->txn.active)
		return;
	if (d->cfg.cs.on) {
		/* the plan decides the windows; the decision only sets U and the granularity */
		cosched_decided(d, jb);
		return;
	}
	txn_fmt_resv(dec->period_ns, dec->slice_ns, rs, sizeof(rs));
	if (dec->slice_ns >= dec->period_ns) {
		log_debug("job %s: %s (%s) runs unconstrained: not sent", jb->name, rs,
		          control_reason_name(dec->reason));
		return;
	}
	log_debug("job %s: %s (%s, e %.2f)", jb->name, rs, control_reason_name(dec->reason),
	          dec->err_pct);
	struct txn tpl = {.kind = TXN_CONTROL};
	txn_start(d, jb, &tpl, dec->period_ns, dec->slice_ns, NULL, 0, now);
}

void decide_sync(struct ctld *d, struct job *jb, mono_ns now)
{
	const struct control_job *cj = &jb->control.loop;
	struct control_decision dec;

	if (d->cfg.cs.on || jb->txn.active || cj->slice_ns >= cj->period_ns)
		return;
	if (cj->period_ns == jb->commit.period && cj->slice_ns == jb->commit.slice)
		return;
	control_keep(cj, CONTROL_R_NONE, &dec);
	dec.changed = true;
	decide_apply(d, jb, &dec, now);
}
