/*
 * The agent's side of the conversation with the controller, above the link (ctl_link.c):
 * what it announces (JOB_PROC: a process joined or left), and what it does with what the
 * controller says: a CONSTRAINT is applied to every process of its job or to none
 * (constraint.c) and answered with CONSTRAINT_ACK, the EPOCH is given to vsched
 * (vsc.c), and on every registration each process is announced again, since the
 * controller keeps tasks and rates as soft state. A new controller instance numbers its
 * generations afresh: what is in force stays, the generations start over.
 */
#include "agent.h"

#include <errno.h>
#include <string.h>

#include "log.h"
#include "text.h"

#define RECV_MAX 1000 /* frames per call: the applications get their turn */

void controller_announce(struct agent *a, uint32_t job_handle, const char *job, uint32_t rank,
                         pid_t pid, uint8_t event)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_JOB_PROC;
	m.u.proc.job = job_handle;
	m.u.proc.rank = rank;
	m.u.proc.pid = pid;
	m.u.proc.event = event;
	text_fmt(m.u.proc.name, sizeof(m.u.proc.name), "%s", job);
	ctl_send(a, &m);
}

void controller_announce_proc(struct agent *a, int p, uint8_t event)
{
	const struct agent_proc *pr = &a->procs[p];
	const struct agent_job *jb = &a->jobs[pr->job];

	controller_announce(a, jb->handle, jb->name, pr->rank, pr->pid, event);
}

/* Answers a CONSTRAINT: status 0 or -errno with the reason (made printable). */
static void send_ack(struct agent *a, uint64_t gen, const char *job, int rc, const char *why)
{
	struct pctl_msg ack;

	memset(&ack, 0, sizeof(ack));
	ack.type = PCTL_CONSTRAINT_ACK;
	ack.u.cack.gen = gen;
	ack.u.cack.status = rc;
	text_fmt(ack.u.cack.job, sizeof(ack.u.cack.job), "%s", job);
	text_fmt(ack.u.cack.reason, sizeof(ack.u.cack.reason), "%s", why);
	text_scrub(ack.u.cack.reason);
	if (ctl_send_now(a, &ack) != 0)
		log_warnx("constraint gen %llu: CONSTRAINT_ACK not sent", (unsigned long long)gen);
}

static void on_constraint(struct agent *a, const struct pctl_constraint *c)
{
	char why[PCTL_REASON_MAX + 1] = "";
	int rc = cons_apply(a, c, why, sizeof(why));

	if (rc == 0)
		a->cnt.cons_applied++;
	else {
		a->cnt.cons_refused++;
		log_warnx("constraint gen %llu for job %s refused: %s", (unsigned long long)c->gen,
		          c->job, why);
	}
	send_ack(a, c->gen, c->job, rc, why);
}

static void on_registered(struct agent *a)
{
	int n = 0;

	if (a->ctl.new_instance) {
		for (int j = 0; j < AGENT_MAX_JOBS; j++)
			a->jobs[j].gen = 0;
		log_info("controller instance changed (%llx -> %llx): constraint generations "
		         "start over",
		         (unsigned long long)a->ctl.prev_instance,
		         (unsigned long long)a->ctl.ctl_instance);
	}
	for (int p = 0; p < a->cfg.max_procs; p++)
		if (a->procs[p].used && !a->procs[p].exited) {
			controller_announce_proc(a, p, PCTL_PROC_JOINED);
			n++;
		}
	nodeinfo_reset(a);
	nodeinfo_tick(a);
	log_info("controller link: registered as %s (controller instance %llx), "
	         "%d process(es) announced",
	         a->cfg.node, (unsigned long long)a->ctl.ctl_instance, n);
}

void controller_on_frames(struct agent *a)
{
	for (int i = 0; i < RECV_MAX; i++) {
		struct pctl_msg m;
		char why[200];

		switch (ctl_recv(a, &m, why, sizeof(why))) {
		case CTL_RX_NONE:
			return;
		case CTL_RX_REGISTERED:
			on_registered(a);
			break;
		case CTL_RX_BAD_CONSTRAINT: /* still answered, by name */
			a->cnt.cons_refused++;
			send_ack(a, m.u.cons.gen, m.u.cons.job, -EINVAL, why);
			break;
		case CTL_RX_MSG:
			if (m.type == PCTL_CONSTRAINT)
				on_constraint(a, &m.u.cons);
			else if (m.type == PCTL_EPOCH)
				vsc_epoch_set(a, m.u.epoch.realtime_ns);
			pctl_msg_release(&m);
			break;
		default:
			break;
		}
	}
}
