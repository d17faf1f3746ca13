/*
 * Changes an administrator asks for: a job's target (SET_RATE) and its settings (JOB_SET).
 * A change is checked first (range, a transaction already open: EBUSY, what the control
 * library accepts) and refused with the reason and no change at all; an accepted one that
 * moves the job's constraint becomes a transaction whose outcome is the client's reply
 * (txn.c), otherwise it is answered at once. In coschedule mode the new share goes into a
 * new plan and the job's planned windows are the transaction.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "duration.h"
#include "log.h"
#include "text.h"

/* The client's answer to a target set without a transaction to wait for. */
static void target_set_why(const struct ctld *d, const struct job *jb, double pct, char *why,
                           size_t whylen)
{
	if (jb->control.loop.state == CONTROL_CALIBRATING)
		text_fmt(why, whylen, "job %s: target %g%% set; applied once R_max is measured",
		         jb->name, pct);
	else if (!jobs_has_up_node(d, jb))
		text_fmt(why, whylen, "job %s: target %g%% set; applied when its ranks register",
		         jb->name, pct);
	else
		text_fmt(why, whylen, "job %s: target %g%% set", jb->name, pct);
}

/* The control library's answer to the new target; 0 or the status with why. */
static int target_check(struct job *jb, double pct, mono_ns now, struct control_decision *dec,
                        char *why, size_t whylen)
{
	char a[32], b[32];
	int rc;

	if (!isfinite(pct) || pct <= 0 || pct > 100) {
		text_fmt(why, whylen, "job %s: target %g%%: must be in (0, 100]", jb->name, pct);
		return -ERANGE;
	}
	if (jb->txn.active) {
		text_fmt(why, whylen, "job %s: a constraint change is in progress; try again",
		         jb->name);
		return -EBUSY;
	}
	rc = control_set_target(&jb->control.loop, pct, now, dec);
	if (rc == -ERANGE)
		text_fmt(why, whylen,
		         "job %s: target %g%%: slice at the initial period %s would be below the "
		         "smallest slice %s",
		         jb->name, pct,
		         duration_format(jb->control.set.initial_period, a, sizeof(a)),
		         duration_format(jb->control.set.min_slice, b, sizeof(b)));
	else if (rc != 0)
		text_fmt(why, whylen, "job %s: target %g%% refused by the control algorithm",
		         jb->name, pct);
	return rc;
}

/* Coschedule: 0 when the plan has room for the target, else -ENOSPC, logged, with the
 * reason in why and in the job's state (job show); nothing else changes. A lower target
 * only frees room: never refused (its U follows the control loop, and the plan gives what
 * it can). */
static int target_room(struct ctld *d, int j, double pct, mono_ns now, char *why, size_t whylen)
{
	struct job *jb = d->jobs[j];
	char tmp[PADM_REASON_MAX + 1];
	int rc;

	if (!isfinite(pct) || pct <= 0 || pct > 100 || jb->txn.active)
		return 0; /* target_check says why */
	if (jb->control.target_pct > 0 && pct <= jb->control.target_pct)
		return 0;
	rc = cosched_room(d, j, pct, now, tmp, sizeof(tmp));
	if (rc == 0)
		return 0;
	text_fmt(why, whylen, "job %s: target %g%% refused: %s; nothing changed", jb->name, pct,
	         tmp);
	jb->commit.refused = true;
	text_fmt(jb->commit.reason, sizeof(jb->commit.reason), "target %g%% refused: %s", pct, tmp);
	log_warnx("admin: refused: %s", why);
	return rc;
}

int change_target(struct ctld *d, int j, double pct, const uint8_t *cid, size_t cidlen, mono_ns now,
                  char *why, size_t whylen)
{
	struct job *jb = d->jobs[j];
	struct control_decision dec;
	struct txn tpl = {
	    .kind = TXN_TARGET, .old_target = jb->control.target_pct, .new_target = pct};
	int rc = d->cfg.cs.on ? target_room(d, j, pct, now, why, whylen) : 0;

	if (rc == 0)
		rc = target_check(jb, pct, now, &dec, why, whylen);
	if (rc != 0)
		return rc;
	jb->control.target_pct = pct;
	if (d->cfg.cs.on) {
		cosched_replan(d, now);
		rc = cosched_push(d, j, &tpl, cid, cidlen, now);
		if (rc == 1)
			return 1;
		if (rc < 0)
			persist_mark(d);
		if (rc == -EAGAIN) {
			text_fmt(why, whylen,
			         "job %s: target %g%% set; its windows follow once a job they "
			         "take slots from has moved",
			         jb->name, pct);
			return 0;
		}
	} else if (dec.changed && dec.slice_ns < dec.period_ns) {
		if (txn_start(d, jb, &tpl, dec.period_ns, dec.slice_ns, cid, cidlen, now) == 1)
			return 1; /* the reply comes with the acknowledgements */
	} else {
		persist_mark(d);
	}
	target_set_why(d, jb, pct, why, whylen);
	return 0;
}

/* The settings q asks for over the job's, checked with its target; *p: their control
 * parameters. 0 or the status with "job J: reason" in why. */
static int settings_for(const struct ctld *d, const struct job *jb, const struct padm_request *q,
                        struct job_settings *s, struct control_params *p, char *why, size_t whylen)
{
	char tmp[PADM_REASON_MAX + 1];
	int rc;

	*s = jb->control.set;
	rc = settings_apply(q, s, tmp, sizeof(tmp));
	if (rc == 0) {
		/* keep a measured R_max unless a new one is given or asked to be measured */
		if (!(q->mask & PADM_SET_RMAX) && jb->control.loop.r_max_calibrated &&
		    s->r_max == 0)
			s->r_max = jb->control.loop.r_max;
		settings_control_params(&d->cfg, s, jb->control.target_pct, p);
		p->nranks = jb->control.loop.nranks;
		if (control_params_check(p) != 0) {
			text_fmt(tmp, sizeof(tmp),
			         "settings refused by the control algorithm (with target %g%% the "
			         "slice at the initial period must be >= min_slice)",
			         jb->control.target_pct);
			rc = -EINVAL;
		}
	}
	if (rc != 0)
		text_fmt(why, whylen, "job %s: %s", jb->name, tmp);
	return rc;
}

int change_settings(struct ctld *d, int j, const struct padm_request *q, const uint8_t *cid,
                    size_t cidlen, mono_ns now, char *why, size_t whylen)
{
	struct job *jb = d->jobs[j];
	struct job_settings s;
	struct control_decision dec;
	struct control_params p;
	struct txn tpl = {.kind = TXN_SETTINGS};
	int rc;

	if (jb->txn.active) {
		text_fmt(why, whylen, "job %s: a constraint change is in progress; try again",
		         jb->name);
		return -EBUSY;
	}
	rc = settings_for(d, jb, q, &s, &p, why, whylen);
	if (rc != 0)
		return rc;
	tpl.saved_ctl = jb->control.loop;
	tpl.saved_set = jb->control.set;
	rc = control_job_init(&jb->control.loop, &p, now, &dec);
	if (rc != 0) {
		jb->control.loop = tpl.saved_ctl;
		text_fmt(why, whylen, "job %s: settings refused: %s", jb->name, strerror(-rc));
		return rc;
	}
	jobs_fit_ranks(jb);
	log_info("job %s: settings: algorithm %s, epsilon %g, R_max %g%s", jb->name,
	         padm_algo_name(s.algo), s.eps_pct, s.r_max, s.r_max_given ? " (given)" : "");
	jb->control.set = s;
	if (d->cfg.cs.on) {
		cosched_decided(d, jb); /* the loop's period may be a new granularity */
		cosched_replan(d, now);
		rc = cosched_push(d, j, &tpl, cid, cidlen, now);
		if (rc == 1)
			return 1;
		if (rc < 0) {
			control_job_fini(&tpl.saved_ctl);
			persist_mark(d);
		}
		/* rc 0: committed at once, the commit released saved_ctl */
	} else if (dec.slice_ns < dec.period_ns) {
		if (txn_start(d, jb, &tpl, dec.period_ns, dec.slice_ns, cid, cidlen, now) == 1)
			return 1;
		/* committed at once: the commit released saved_ctl */
	} else {
		control_job_fini(&tpl.saved_ctl);
		persist_mark(d);
	}
	text_fmt(why, whylen, "job %s: settings changed", jb->name);
	return 0;
}
