/*
 * The daemon's state on disk: when it is written (the group commit) and how a restart reads
 * it back. The file format is state.c's.
 *
 * Group commit. The loop calls persist_commit() once per turn (loop_end_turn), after the
 * turn's messages and timers were handled and before it blocks in zmq_poll again; every
 * change of the turn goes into one write (one fsync of the file, one of the directory)
 * instead of one per change.
 *
 * Durability contract: whatever the controller tells an administrator (a reply such as
 * "target 40% applied" or "settings changed", or a listing showing them) and relies on
 * after a restart (targets, settings) is on disk before the reply leaves. This holds
 * because (1) every change of the persisted state is marked with persist_mark() in the
 * turn it is made, which makes this turn's write unconditional (state_sync; state_dirty
 * alone is a failed write waiting for its retry), and (2) every reply is queued in the
 * reply outbox (outbox.c) and sent only after this returns (loop_end_turn: persist_commit,
 * then admin_flush). A crash before the write loses only changes no administrator has been
 * told of. Generations need no more: a restart numbers them above wall-clock seconds << 20
 * anyway (controller.h).
 *
 * A failed write is logged, the state stays dirty and is retried at most once a second
 * (and at once with the next change, persist_mark()), and the queued replies are still
 * sent: the change is in force on the nodes, only its persistence is late.
 */
#include "controller.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "text.h"

int persist_save(struct ctld *d)
{
	struct state_job *js = NULL;
	char why[300];
	int rc;

	if (d->njobs > 0) {
		js = calloc((size_t)d->njobs, sizeof(*js));
		if (js == NULL)
			fatalx("out of memory");
	}
	for (int i = 0; i < d->njobs; i++) {
		text_fmt(js[i].name, sizeof(js[i].name), "%s", d->jobs[i]->name);
		js[i].target = d->jobs[i]->control.target_pct;
		js[i].set = d->jobs[i]->control.set;
	}
	rc = state_save(d->cfg.state_file, d->next_gen, js, d->njobs, why, sizeof(why));
	free(js);
	if (rc != 0) {
		log_warnx("state not saved: %s", why);
		return -1;
	}
	d->state_dirty = false;
	d->state_writes++;
	log_debug("state saved to %s (%d jobs)", d->cfg.state_file, d->njobs);
	return 0;
}

void persist_mark(struct ctld *d)
{
	d->state_dirty = true;
	d->state_sync = true;
}

int persist_commit(struct ctld *d, mono_ns now)
{
	if (!d->state_dirty)
		return 0;
	if (!d->state_sync && mono_before(now, d->state_due))
		return 0;
	d->state_sync = false;
	d->state_due = now + NSEC_PER_SEC;
	return persist_save(d);
}

mono_ns persist_next(const struct ctld *d)
{
	return d->state_dirty ? d->state_due : 0;
}

int persist_restore(struct ctld *d, mono_ns now, char *why, size_t whylen)
{
	struct state_job *js;
	uint64_t last_gen = 0, base;
	int n, rc;

	rc = state_load(d->cfg.state_file, &last_gen, &js, &n, why, whylen);
	if (rc == -EINVAL)
		return -1;
	/* generations grow across restarts: see controller.h */
	base = (uint64_t)time(NULL) << 20;
	d->next_gen = last_gen + 1 > base ? last_gen + 1 : base;
	if (rc == -ENOENT) {
		log_info("no state file %s: starting with no jobs", d->cfg.state_file);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		jobs_restore(d, js[i].name, &js[i].set, js[i].target, now);
		log_info("job %s: restored, target %g%%, algorithm %s", js[i].name, js[i].target,
		         padm_algo_name(js[i].set.algo));
	}
	free(js);
	return 0;
}
