/*
 * Bad input from applications and the controller, handled by vsched-agent without harm
 * (agent/app_relay.c, agent/constraint.c): short, oversized, unknown type, other version,
 * bad magic, a REGISTER naming a pid that is not the sender's, a REPORT or BYTES whose
 * handle was never registered, a rank that does not match, a CONSTRAINT for an unknown job
 * or an older generation — each refused and counted. Plus the all-or-nothing rule of
 * CONSTRAINT against a fake vsched that refuses the second process: the first is put back.
 * And the life of handles (registry_reap, which returns what it forgot): a process that exits keeps
 * its handles until they have been silent for AGENT_STALE_INTERVALS report intervals, so that its
 * last REPORT, still queued when the pid disappears, is relayed; then it is forgotten. A closing
 * handle of a live process expires after the same silence; a live one (a stalled application) never
 * does.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#include "agent.h"
#include "log.h"

static struct agent a;

static int no_pmu(pid_t pid)
{
	(void)pid;
	return -ENOENT;
}

static int no_read(int fd, uint64_t *v)
{
	(void)fd;
	(void)v;
	return -EIO;
}

static int setup(void **state)
{
	struct smem_ops ops = {
	    .perf_open = no_pmu, .perf_read = no_read, .resctrl_root = "/nonexistent"};
	(void)state;
	log_init("test", 1, 0);
	memset(&a, 0, sizeof(a));
	agent_config_defaults(&a.cfg);
	a.cfg.max_procs = 16;
	a.cfg.provisional.period = 0; /* no vsched call on REGISTER */
	smem_detect(&a.mem, &ops);
	assert_int_equal(registry_init(&a), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sampler_release_all(&a);
	registry_free(&a);
	return 0;
}

/* registry_reap as the sampling round calls it: what it forgot is told and released. */
static struct agent_gone gone[16];
static int reap(mono_ns now)
{
	int n = registry_reap(&a, now, gone);

	for (int i = 0; i < n; i++)
		sampler_forget(&a, &gone[i]);
	return n;
}

/* Forgets process p as the relay does when its pid was reused. */
static void drop(int p)
{
	struct agent_gone g;

	registry_drop_proc(&a, p, &g);
	sampler_forget(&a, &g);
}

static int reg(uint32_t handle, const char *job, uint32_t rank, pid_t pid, long peer_pid,
               long peer_uid)
{
	struct aproto_register r;
	uint8_t buf[APROTO_MAX_FRAME];
	int n;

	memset(&r, 0, sizeof(r));
	r.handle = handle;
	r.rank = rank;
	r.pid = (uint32_t)pid;
	r.interval_ns = 100000000;
	snprintf(r.job, sizeof(r.job), "%s", job);
	n = aproto_encode_register(&r, buf, sizeof(buf));
	assert_true(n > 0);
	return relay_handle(&a, buf, (size_t)n, peer_pid, peer_uid);
}

static int report(uint32_t handle, uint32_t rank, uint32_t seq, uint64_t units)
{
	struct aproto_report r = {
	    .handle = handle, .rank = rank, .seq = seq, .units = units, .interval_ns = 100000000};
	uint8_t buf[APROTO_REPORT_SIZE];
	int n = aproto_encode_report(&r, buf, sizeof(buf));

	assert_int_equal(n, APROTO_REPORT_SIZE);
	return relay_handle(&a, buf, (size_t)n, getpid(), 1000);
}

static int report_final(uint32_t handle, uint32_t rank, uint32_t seq, uint64_t units)
{
	struct aproto_report r = {.flags = APROTO_F_FINAL,
	                          .handle = handle,
	                          .rank = rank,
	                          .seq = seq,
	                          .units = units,
	                          .interval_ns = 100000000};
	uint8_t buf[APROTO_REPORT_SIZE];
	int n = aproto_encode_report(&r, buf, sizeof(buf));

	assert_int_equal(n, APROTO_REPORT_SIZE);
	return relay_handle(&a, buf, (size_t)n, getpid(), 1000);
}

static void test_parse_peer(void **state)
{
	long uid, pid;

	(void)state;
	assert_int_equal(relay_parse_peer("localhost:0:0:6855", &uid, &pid), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(pid, 6855);
	assert_int_equal(relay_parse_peer(":1000:100:42", &uid, &pid), 0);
	assert_int_equal(uid, 1000);
	assert_int_equal(pid, 42);
	assert_int_equal(relay_parse_peer("127.0.0.1", &uid, &pid), -1);
	assert_int_equal(relay_parse_peer(NULL, &uid, &pid), -1);
	assert_int_equal(relay_parse_peer("a:b:c:d", &uid, &pid), -1);
	assert_int_equal(relay_parse_peer(":1:2:0", &uid, &pid), -1);
}

static void test_register_and_report(void **state)
{
	int p;
	uint8_t buf[APROTO_BYTES_SIZE];
	struct aproto_bytes b = {
	    .handle = 0xabc, .rank = 3, .seq = 0, .mem_bytes = 4096, .net_bytes = 100};

	(void)state;
	assert_int_equal(reg(0xabc, "jobA", 3, getpid(), getpid(), 1000), 0);
	p = registry_find_proc(&a, getpid());
	assert_true(p >= 0);
	assert_int_equal(a.procs[p].rank, 3);
	assert_string_equal(a.jobs[a.procs[p].job].name, "jobA");
	assert_int_equal(a.jobs[a.procs[p].job].handle, 1);
	assert_false(a.procs[p].managed); /* no provisional: waits for the controller */
	/* Idempotent re-registration. */
	assert_int_equal(reg(0xabc, "jobA", 3, getpid(), getpid(), 1000), 0);
	assert_int_equal(registry_nprocs(&a), 1);
	/* Reports: forwarded (dropped here: no controller), gaps counted. */
	assert_int_equal(report(0xabc, 3, 0, 10), 0);
	assert_int_equal(report(0xabc, 3, 4, 10), 0);
	assert_true(a.cnt.reports_lost == 3);
	assert_true(a.cnt.rates_dropped == 2);
	assert_int_equal(aproto_encode_bytes(&b, buf, sizeof(buf)), APROTO_BYTES_SIZE);
	assert_int_equal(relay_handle(&a, buf, sizeof(buf), getpid(), 1000), 0);
	assert_true(a.procs[p].app_bytes_seen);
	assert_true(a.procs[p].app_mem_total == 4096);
	assert_true(a.procs[p].app_net_total == 100);
}

static void test_refusals_counted(void **state)
{
	uint8_t buf[512];
	struct aproto_report r = {
	    .handle = 0xabc, .rank = 3, .seq = 5, .units = 1, .interval_ns = 1};
	uint64_t ok = a.cnt.app_ok;
	int n;

	(void)state;
	/* A pid that is not the sender's (sender uid 1000, pid ours; names pid 1). */
	assert_int_equal(reg(0x111, "jobB", 0, 1, getpid(), 1000), -EPERM);
	assert_true(a.cnt.app_foreign_pid == 1);
	assert_int_equal(registry_find_proc(&a, 1), -1);
	/* A pid that does not exist, even from root. */
	assert_int_equal(reg(0x112, "jobB", 0, 0x3ffffff0, 1, 0), -ESRCH);
	assert_true(a.cnt.app_foreign_pid == 2);
	/* The same pid in another job. */
	assert_int_equal(reg(0x113, "jobB", 0, getpid(), getpid(), 1000), -EEXIST);
	assert_true(a.cnt.app_unknown_job == 1);
	/* REPORT / BYTES with a handle never registered. */
	assert_int_equal(report(0xdead, 3, 0, 1), -ENOENT);
	assert_true(a.cnt.app_unknown_handle == 1);
	/* Rank other than the registered one. */
	assert_int_equal(report(0xabc, 4, 5, 1), -EINVAL);
	/* Short, oversized, unknown type, other version, bad magic. */
	n = aproto_encode_report(&r, buf, sizeof(buf));
	assert_int_equal(relay_handle(&a, buf, 2, -1, -1), -EBADMSG);
	assert_true(a.cnt.app_short == 1);
	assert_int_equal(relay_handle(&a, buf, (size_t)n - 1, -1, -1) < 0, 1);
	assert_true(a.cnt.app_short == 2);
	memset(buf + n, 0, 200);
	assert_int_equal(relay_handle(&a, buf, 300, -1, -1), -EBADMSG);
	assert_true(a.cnt.app_long == 1);
	assert_true(relay_handle(&a, buf, (size_t)n + 1, -1, -1) < 0);
	assert_true(a.cnt.app_long == 2);
	buf[2] = 77;
	assert_true(relay_handle(&a, buf, (size_t)n, -1, -1) < 0);
	assert_true(a.cnt.app_type == 1);
	n = aproto_encode_report(&r, buf, sizeof(buf));
	buf[1] = APROTO_VERSION + 1;
	assert_int_equal(relay_handle(&a, buf, (size_t)n, -1, -1), -EPROTO);
	assert_true(a.cnt.app_version == 1);
	n = aproto_encode_report(&r, buf, sizeof(buf));
	buf[0] = 'Z';
	assert_true(relay_handle(&a, buf, (size_t)n, -1, -1) < 0);
	assert_true(a.cnt.app_bad >= 2);
	/* Nothing of that was accepted, and the table is as before. */
	assert_true(a.cnt.app_ok == ok);
	assert_int_equal(registry_nprocs(&a), 1);
}

static void test_constraint_unknown_job_and_stale(void **state)
{
	struct pctl_constraint c;
	char why[256];
	int j;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.gen = 1;
	c.nwin = 1;
	c.win[0].period = 100000000;
	c.win[0].slice = 10000000;
	snprintf(c.job, sizeof(c.job), "nosuchjob");
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "unknown job nosuchjob"));
	assert_true(a.cnt.ctl_unknown_job == 1);
	j = registry_find_job(&a, "jobA");
	assert_true(j >= 0);
	a.jobs[j].constrained = true;
	a.jobs[j].gen = 5;
	snprintf(c.job, sizeof(c.job), "jobA");
	c.gen = 3;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ESTALE);
	assert_true(a.cnt.ctl_stale == 1);
	a.jobs[j].constrained = false;
	a.jobs[j].gen = 0;
}

/* ---- a fake vsched that refuses one pid --------------------------------------------- */

struct fake {
	void *ctx;
	const char *ep;
	pid_t refuse; /* ADD of this pid: -ENOSPC */
	pid_t prior;  /* already under vsched (placed by someone else) with prior_resv */
	struct vsp_resv prior_resv;
	int n;
	uint8_t type[16];
	int32_t pid[16];
	struct vsp_resv resv[16];
	uint8_t nwin[16];
	struct vsp_resv win[16][VSP_MAX_WINDOWS];
	uint64_t epoch[16];
	int32_t refuse_once; /* ADD of this pid refused once */
	volatile int stop;
};

static void *fake_vsched(void *arg)
{
	struct fake *f = arg;
	void *rep = zmq_socket(f->ctx, ZMQ_REP);

	assert_int_equal(zmq_bind(rep, f->ep), 0);
	while (!f->stop) {
		zmq_pollitem_t it = {.socket = rep, .events = ZMQ_POLLIN};
		uint8_t in[VSP_MAX_FRAME], out[512];
		struct vsp_request req;
		struct vsp_reply r;
		struct vsp_task_stat st;
		int len;

		if (zmq_poll(&it, 1, 50) <= 0)
			continue;
		len = zmq_recv(rep, in, sizeof(in), 0);
		memset(&r, 0, sizeof(r));
		if (vsp_decode_request(in, (size_t)len, &req, NULL, 0) != 0) {
			r.status = -EBADMSG;
		} else {
			if (f->n < 16) {
				f->type[f->n] = req.type;
				f->pid[f->n] = req.pid;
				f->resv[f->n] = req.resv;
				f->nwin[f->n] = req.nwin;
				memcpy(f->win[f->n], req.win, sizeof(req.win));
				f->epoch[f->n] = req.epoch_realtime_ns;
				f->n++;
			}
			if (req.pid == f->refuse_once && req.type == VSP_ADD) {
				f->refuse_once = 0;
				r.status = -ENOSPC;
				snprintf(r.msg, sizeof(r.msg),
				         "cpu 0: load 0.75 + 0.45 > cap 0.90");
			} else if (req.pid == f->refuse && req.type == VSP_ADD) {
				r.status = -ENOSPC;
				snprintf(r.msg, sizeof(r.msg),
				         "cpu 1: load 0.80 + 0.50 > cap 0.85");
			} else if (req.pid == f->prior && req.type == VSP_ADD) {
				r.status = -EEXIST;
				snprintf(r.msg, sizeof(r.msg), "pid %d: already managed", req.pid);
			} else if (req.type == VSP_LIST && f->prior) {
				memset(&st, 0, sizeof(st));
				st.pid = f->prior;
				st.resv = f->prior_resv;
				r.ntasks = 1;
				r.tasks = &st;
			}
		}
		len = vsp_encode_reply(&r, out, sizeof(out));
		zmq_send(rep, out, (size_t)len, 0);
	}
	zmq_close(rep);
	return NULL;
}

static void test_constraint_all_or_nothing(void **state)
{
	struct fake f = {.ep = "inproc://fake-vsched"};
	struct pctl_constraint c;
	pthread_t th;
	char why[256];
	int p1, p2;

	(void)state;
	f.ctx = zmq_ctx_new();
	assert_int_equal(pthread_create(&th, NULL, fake_vsched, &f), 0);
	usleep(50000);
	assert_int_equal(vsc_open(&a.vs, f.ctx, f.ep, 2 * NSEC_PER_SEC), 0);
	p1 = registry_add_proc(&a, "jobC", 0, 900001, 1, why, sizeof(why));
	p2 = registry_add_proc(&a, "jobC", 1, 900002, 1, why, sizeof(why));
	assert_true(p1 >= 0 && p2 >= 0);
	f.refuse = 900002;
	memset(&c, 0, sizeof(c));
	c.gen = 7;
	c.nwin = 1;
	c.win[0].period = 100000000;
	c.win[0].slice = 50000000;
	snprintf(c.job, sizeof(c.job), "jobC");
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ENOSPC);
	assert_non_null(strstr(why, "pid 900002"));
	assert_non_null(strstr(why, "cap 0.85"));
	/* LIST (what is there already), ADD 900001, ADD 900002 (refused), then 900001 taken
	 * out again. */
	assert_int_equal(f.n, 4);
	assert_int_equal(f.type[0], VSP_LIST);
	assert_int_equal(f.type[1], VSP_ADD);
	assert_int_equal(f.pid[1], 900001);
	assert_int_equal(f.type[2], VSP_ADD);
	assert_int_equal(f.pid[2], 900002);
	assert_int_equal(f.type[3], VSP_DEL);
	assert_int_equal(f.pid[3], 900001);
	assert_false(a.procs[p1].managed);
	assert_false(a.jobs[a.procs[p1].job].constrained);
	/* 900001 was placed by someone else (say `vschedctl job run`) with 20ms/200ms: a
	 * refusal gives it back exactly that, not a removal. */
	f.prior = 900001;
	f.prior_resv.period = 200000000;
	f.prior_resv.slice = 20000000;
	f.prior_resv.deadline = 200000000;
	f.n = 0;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ENOSPC);
	assert_int_equal(f.n, 4);
	assert_int_equal(f.type[0], VSP_LIST);
	assert_int_equal(f.type[1], VSP_SET); /* known to be there: SET, no failed ADD */
	assert_int_equal(f.pid[1], 900001);
	assert_int_equal(f.type[2], VSP_ADD);
	assert_int_equal(f.type[3], VSP_SET);
	assert_int_equal(f.pid[3], 900001);
	assert_true(f.resv[3].period == 200000000 && f.resv[3].slice == 20000000);
	f.prior = 0;
	/* Accepted for both: applied, generation recorded. */
	f.refuse = 0;
	f.n = 0;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), 0);
	assert_int_equal(f.n, 3); /* LIST, ADD, ADD */
	assert_true(a.procs[p1].managed && a.procs[p2].managed);
	assert_true(a.procs[p1].gen == 7);
	assert_true(a.jobs[a.procs[p1].job].gen == 7);
	/* The same generation again: nothing to do. */
	f.n = 0;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), 0);
	assert_int_equal(f.n, 0);
	/* The same generation with another reservation: a controller bug, refused. */
	c.win[0].slice = 60000000;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ESTALE);
	assert_int_equal(f.n, 0);
	/* The next generation: SET for both (managed by the agent now), no LIST. */
	c.gen = 8;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.type[0], VSP_SET);
	assert_int_equal(f.type[1], VSP_SET);
	f.stop = 1;
	pthread_join(th, NULL);
	vsc_close(&a.vs);
	zmq_ctx_term(f.ctx);
	drop(p1);
	drop(p2);
}

/* A co-scheduling CONSTRAINT: two windows, applied to every process as one ADD/SET each. */
/* A constraint refused for want of room is tried again after the processes of other jobs
 * that hold only the provisional reservation have left vsched. */
static void test_provisional_yields(void **state)
{
	struct fake f = {.ep = "inproc://fake-vsched-yield"};
	struct pctl_constraint c;
	pthread_t th;
	char why[256];
	int pp, pn, pc;

	(void)state;
	f.ctx = zmq_ctx_new();
	assert_int_equal(pthread_create(&th, NULL, fake_vsched, &f), 0);
	usleep(50000);
	assert_int_equal(vsc_open(&a.vs, f.ctx, f.ep, 2 * NSEC_PER_SEC), 0);
	pp = registry_add_proc(&a, "jobP", 0, 900021, 1, why, sizeof(why)); /* provisional */
	pc = registry_add_proc(&a, "jobR", 0, 900023, 1, why, sizeof(why)); /* constrained */
	pn = registry_add_proc(&a, "jobQ", 0, 900022, 1, why, sizeof(why));
	assert_true(pp >= 0 && pn >= 0 && pc >= 0);
	a.procs[pp].managed = true;
	a.procs[pp].gen = 0;
	a.procs[pc].managed = true;
	a.procs[pc].gen = 5;
	a.jobs[a.procs[pc].job].constrained = true;
	a.jobs[a.procs[pc].job].gen = 5;
	f.refuse_once = 900022;
	memset(&c, 0, sizeof(c));
	c.gen = 9;
	c.nwin = 1;
	c.win[0] = (struct vsp_resv){.period = 100000000, .slice = 45000000, .deadline = 45000000};
	snprintf(c.job, sizeof(c.job), "jobQ");
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), 0);
	/* LIST, ADD 900022 (refused), DEL 900021 (the provisional one only), LIST, ADD */
	assert_int_equal(f.n, 5);
	assert_int_equal(f.type[1], VSP_ADD);
	assert_int_equal(f.type[2], VSP_DEL);
	assert_int_equal(f.pid[2], 900021);
	assert_int_equal(f.type[4], VSP_ADD);
	assert_int_equal(f.pid[4], 900022);
	assert_false(a.procs[pp].managed);
	assert_true(a.procs[pc].managed);
	assert_true(a.procs[pn].managed && a.procs[pn].gen == 9);
	/* refused again with nothing provisional left: refused, no retry */
	f.refuse = 900022;
	f.n = 0;
	c.gen = 10;
	a.procs[pn].managed = false;
	a.jobs[a.procs[pn].job].constrained = false;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ENOSPC);
	assert_int_equal(f.n, 2); /* LIST, ADD (refused) */
	f.stop = 1;
	pthread_join(th, NULL);
	vsc_close(&a.vs);
	zmq_ctx_term(f.ctx);
}

static void test_constraint_windows(void **state)
{
	struct fake f = {.ep = "inproc://fake-vsched-win"};
	struct pctl_constraint c;
	pthread_t th;
	char why[256];
	int p1, p2;
	const uint64_t ms = 1000000;

	(void)state;
	f.ctx = zmq_ctx_new();
	assert_int_equal(pthread_create(&th, NULL, fake_vsched, &f), 0);
	usleep(50000);
	assert_int_equal(vsc_open(&a.vs, f.ctx, f.ep, 2 * NSEC_PER_SEC), 0);
	p1 = registry_add_proc(&a, "jobW", 0, 900011, 1, why, sizeof(why));
	p2 = registry_add_proc(&a, "jobW", 1, 900012, 1, why, sizeof(why));
	assert_true(p1 >= 0 && p2 >= 0);
	memset(&c, 0, sizeof(c));
	c.gen = 3;
	c.nwin = 2;
	c.win[0] = (struct vsp_resv){100 * ms, 30 * ms, 30 * ms, 0};
	c.win[1] = (struct vsp_resv){100 * ms, 20 * ms, 20 * ms, 50 * ms};
	snprintf(c.job, sizeof(c.job), "jobW");
	/* refused for the second process: the first is taken out again, nothing stays */
	f.refuse = 900012;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ENOSPC);
	assert_int_equal(f.n, 4); /* LIST, ADD, ADD (refused), DEL */
	assert_int_equal(f.type[1], VSP_ADD);
	assert_int_equal(f.nwin[1], 2);
	assert_int_equal(f.type[3], VSP_DEL);
	assert_false(a.procs[p1].managed);
	/* accepted: both get both windows */
	f.refuse = 0;
	f.n = 0;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), 0);
	assert_int_equal(f.n, 3);
	for (int k = 1; k < 3; k++) {
		assert_int_equal(f.type[k], VSP_ADD);
		assert_int_equal(f.nwin[k], 2);
		assert_memory_equal(f.win[k], c.win, 2 * sizeof(c.win[0]));
	}
	assert_int_equal(a.procs[p1].resv.n, 2);
	assert_int_equal(a.jobs[a.procs[p1].job].resv.n, 2);
	/* the same generation with one window less: a different reservation, refused */
	f.n = 0;
	c.nwin = 1;
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), -ESTALE);
	assert_int_equal(f.n, 0);
	/* next generation, three windows: SET for both */
	c.gen = 4;
	c.nwin = 3;
	c.win[2] = (struct vsp_resv){100 * ms, 10 * ms, 10 * ms, 80 * ms};
	assert_int_equal(cons_apply(&a, &c, why, sizeof(why)), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.type[0], VSP_SET);
	assert_int_equal(f.nwin[0], 3);
	assert_int_equal(f.nwin[1], 3);
	/* EPOCH: given to vsched at once, then not again before the re-assertion time */
	f.n = 0;
	a.epoch_ns = 0;
	vsc_epoch_set(&a, 1700000000000000000ULL);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.type[0], VSP_EPOCH);
	assert_true(f.epoch[0] == 1700000000000000000ULL);
	assert_false(a.epoch_pending);
	vsc_epoch_tick(&a, mono_now());
	assert_int_equal(f.n, 1);
	/* due again after AGENT_EPOCH_REASSERT, or when vsched answers after not answering */
	vsc_epoch_tick(&a, mono_now() + AGENT_EPOCH_REASSERT + 1);
	assert_int_equal(f.n, 2);
	a.vs.fresh = true;
	vsc_epoch_tick(&a, mono_now());
	assert_int_equal(f.n, 3);
	assert_int_equal(f.type[2], VSP_EPOCH);
	a.epoch_ns = 0;
	f.stop = 1;
	pthread_join(th, NULL);
	vsc_close(&a.vs);
	zmq_ctx_term(f.ctx);
	drop(p1);
	drop(p2);
}

/* Reports every 100 ms: stale after 4 x 100 ms of silence. */
#define STALE_NS (AGENT_STALE_INTERVALS * 100 * NSEC_PER_MSEC)

static void test_reap_exited_and_stale(void **state)
{
	pid_t child, parent = getpid();
	int p, nlive, st;
	uint64_t dropped0;
	mono_ns t;
	struct agent_handle *h;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Never outlive the test, whatever happens to it (it may hold inherited fds,
		 * such as a lock a test runner took). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		alarm(20);
		pause();
		_exit(0);
	}
	/* Root registers its child (a launcher); the child reports. */
	assert_int_equal(reg(0x51, "jobR", 1, child, getpid(), 0), 0);
	p = registry_find_proc(&a, child);
	assert_true(p >= 0);
	assert_int_equal(report(0x51, 1, 0, 7), 0);
	/* Alive: not reaped even long after (a stalled application keeps its handle). Other
	 * tests' fake pids are reaped here. */
	reap(mono_now() + 3600 * NSEC_PER_SEC);
	assert_non_null(registry_find_handle(&a, 0x51));
	assert_int_equal(registry_find_proc(&a, child), p);
	assert_false(a.procs[p].exited);
	nlive = registry_nprocs(&a);

	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &st, 0), child);
	/* Gone: marked exited (no longer counted) but kept while its reports may be queued. */
	assert_int_equal(reap(mono_now()), 0);
	assert_true(a.procs[p].exited);
	assert_int_equal(registry_nprocs(&a), nlive - 1);
	/* Its last report, read after the pid went away, is still relayed (dropped here only
	 * because no controller is connected), not refused. */
	dropped0 = a.cnt.rates_dropped;
	assert_int_equal(report_final(0x51, 1, 1, 3), 0);
	assert_true(a.cnt.rates_dropped == dropped0 + 1);
	h = registry_find_handle(&a, 0x51);
	assert_non_null(h);
	t = h->last_seen;
	/* Not yet: silent for less than 4 intervals. */
	assert_int_equal(reap(t + STALE_NS - NSEC_PER_MSEC), 0);
	assert_int_equal(registry_find_proc(&a, child), p);
	/* Silent for 4 intervals: forgotten, with its handle and its job. */
	assert_int_equal(reap(t + STALE_NS), 1);
	assert_int_equal(gone[0].proc.pid, child); /* what the controller is told left */
	assert_string_equal(gone[0].job, "jobR");
	assert_int_equal(registry_find_proc(&a, child), -1);
	assert_null(registry_find_handle(&a, 0x51));
	assert_int_equal(registry_find_job(&a, "jobR"), -1);
	assert_int_equal(report(0x51, 1, 2, 1), -ENOENT);

	/* A closing handle (FINAL seen, no BYTES after it) of a live process: freed after the
	 * same silence; the process stays. A second, live handle of it stays too. */
	assert_int_equal(reg(0x52, "jobA", 3, getpid(), getpid(), 1000), 0);
	assert_int_equal(reg(0x53, "jobA", 3, getpid(), getpid(), 1000), 0);
	assert_int_equal(report_final(0x52, 3, 0, 5), 0);
	t = registry_find_handle(&a, 0x52)->last_seen;
	assert_int_equal(reap(t + STALE_NS - NSEC_PER_MSEC), 0);
	assert_non_null(registry_find_handle(&a, 0x52));
	assert_int_equal(reap(t + STALE_NS), 0);
	assert_null(registry_find_handle(&a, 0x52));
	assert_non_null(registry_find_handle(&a, 0x53));
	assert_true(registry_find_proc(&a, getpid()) >= 0);
	/* The stale time is capped: a 1 h interval does not keep an exited process for 4 h. */
	assert_true(AGENT_STALE_MAX_NS <= 5 * NSEC_PER_SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_peer),
	    cmocka_unit_test(test_register_and_report),
	    cmocka_unit_test(test_refusals_counted),
	    cmocka_unit_test(test_constraint_unknown_job_and_stale),
	    cmocka_unit_test(test_constraint_all_or_nothing),
	    cmocka_unit_test(test_constraint_windows),
	    cmocka_unit_test(test_provisional_yields),
	    cmocka_unit_test(test_reap_exited_and_stale),
	};
	alarm(30);
	return cmocka_run_group_tests(tests, setup, teardown);
}
