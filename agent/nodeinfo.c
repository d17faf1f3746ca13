/*
 * The node's figures for the controller (PCTL_NODE_INFO): vsched's self-test, the finest
 * period it serves with < 1 % misses, so that the controller never asks this node for a
 * finer one, and vsched's effective per-CPU admission cap, so that a co-scheduling plan
 * never gives the processes of one CPU more than vsched admits there. vsched is asked (INFO, one
 * request) every stats_interval while the controller link is up; the figures are sent after every
 * registration and whenever they change. Nothing is sent while vsched does not answer: the
 * controller keeps what it had.
 */
#include "agent.h"

#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"

void nodeinfo_reset(struct agent *a)
{
	a->info_sent = false;
}

void nodeinfo_tick(struct agent *a)
{
	struct vsp_request req;
	struct vsp_reply rep;
	struct pctl_msg m;
	char b[32];

	if (a->ctl.state != CTL_UP)
		return;
	memset(&req, 0, sizeof(req));
	req.type = VSP_INFO;
	if (vsc_call(&a->vs, &req, &rep) != 0 || !rep.has_info) {
		free(rep.tasks);
		return;
	}
	free(rep.tasks);
	memset(&m, 0, sizeof(m));
	m.type = PCTL_NODE_INFO;
	m.u.info.selftest = rep.info.selftest;
	if (rep.info.selftest == VSP_SELFTEST_DONE && rep.info.min_period_ns <= PCTL_MIN_PERIOD_MAX)
		m.u.info.min_period_ns = rep.info.min_period_ns;
	/* vsp_decode_reply refused a cap above the whole CPU */
	m.u.info.cap_ppm = rep.info.cap_ppm;
	if (a->info_sent && a->info_last.selftest == m.u.info.selftest &&
	    a->info_last.min_period_ns == m.u.info.min_period_ns &&
	    a->info_last.cap_ppm == m.u.info.cap_ppm)
		return;
	if (ctl_send(a, &m) != 0)
		return;
	a->info_sent = true;
	a->info_last = m.u.info;
	if (m.u.info.min_period_ns)
		log_info("controller link: node info sent: vsched serves periods down to %s, "
		         "cap %.1f%% per CPU",
		         duration_format(m.u.info.min_period_ns, b, sizeof(b)),
		         m.u.info.cap_ppm / 1e4);
	else
		log_info("controller link: node info sent: vsched self-test %s, no period figure, "
		         "cap %.1f%% per CPU",
		         m.u.info.selftest == VSP_SELFTEST_RUNNING  ? "running"
		         : m.u.info.selftest == VSP_SELFTEST_DONE   ? "found none under 1 % misses"
		         : m.u.info.selftest == VSP_SELFTEST_FAILED ? "failed"
		                                                    : "not run",
		         m.u.info.cap_ppm / 1e4);
}
