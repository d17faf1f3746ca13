/*
 * Writes the seed corpus of the fuzz harnesses: valid messages made by the encoders, the
 * configs printed (-n) from their defaults, a state file saved by state_save, and valid
 * strings of the text parsers. Usage: fuzz_seedgen DIR (writes DIR/HARNESS/valid-NAME;
 * the seeds in the tree, tests/fuzz/corpus, are its output). Seeds whose name starts with
 * "valid-" must be accepted: the replay test checks it, so a seed the protocol outgrew is
 * noticed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller.h"
#include "fuzz_config.h"
#include "proto_admin.h"
#include "proto_apprate.h"
#include "proto_ctl.h"
#include "proto_vsched.h"

static const char *outdir;
static uint8_t buf[8192];

static void seed(const char *harness, const char *name, const void *data, int len)
{
	char path[512];
	FILE *f;

	if (len < 0) {
		fprintf(stderr, "seedgen: %s/%s: encoder refused (%d)\n", harness, name, len);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", outdir, harness);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, harness, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, (size_t)len, f) != (size_t)len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void seed_text(const char *harness, const char *name, const char *s)
{
	seed(harness, name, s, (int)strlen(s));
}

static void apprate_seeds(void)
{
	struct aproto_register reg = {.handle = 0x1234abcd,
	                              .rank = 3,
	                              .pid = 4242,
	                              .interval_ns = 100000000,
	                              .reason = APROTO_REG_FORK,
	                              .job = "lammps.7"};
	struct aproto_report rep = {
	    .handle = 0x1234abcd, .rank = 3, .seq = 17, .units = 250, .interval_ns = 100000000};
	struct aproto_bytes by = {
	    .handle = 0x1234abcd, .rank = 3, .seq = 17, .mem_bytes = 1 << 30, .net_bytes = 1 << 20};

	seed("proto_apprate", "valid-register", buf,
	     aproto_encode_register(&reg, buf, sizeof(buf)));
	seed("proto_apprate", "valid-report", buf, aproto_encode_report(&rep, buf, sizeof(buf)));
	rep.flags = APROTO_F_FINAL;
	seed("proto_apprate", "valid-report-final", buf,
	     aproto_encode_report(&rep, buf, sizeof(buf)));
	seed("proto_apprate", "valid-bytes", buf, aproto_encode_bytes(&by, buf, sizeof(buf)));
}

static void ctl_seed(const char *name, const struct pctl_msg *m)
{
	seed("proto_ctl", name, buf, pctl_encode(m, buf, sizeof(buf)));
}

static void ctl_agent_seeds(void)
{
	struct pctl_bw_entry bw[2] = {
	    {1, 0, 100, 1 << 30, 1 << 20, 1 << 21, PCTL_SRC_PMU, PCTL_SRC_SOCKDIAG},
	    {2, 5, 101, 0, 0, 0, PCTL_SRC_NONE, PCTL_SRC_APP}};
	struct pctl_stats_entry st = {.job = 1, .rank = 0, .gen = 9};
	struct pctl_msg m = {.type = PCTL_NODE_HELLO};

	m.u.hello = (struct pctl_hello){2, 8, 10000000000ULL, 1250000000ULL, 77, "node-1"};
	ctl_seed("valid-node-hello", &m);
	m.type = PCTL_HEARTBEAT;
	m.u.hb = (struct pctl_heartbeat){5, 123456789, 3};
	ctl_seed("valid-heartbeat", &m);
	m.type = PCTL_JOB_PROC;
	m.u.proc = (struct pctl_job_proc){1, 0, 100, PCTL_PROC_JOINED, "bsp-64"};
	ctl_seed("valid-job-proc", &m);
	m.type = PCTL_RATE;
	m.u.rate = (struct pctl_rate){1, 0, 17, 250, 100000000};
	ctl_seed("valid-rate", &m);
	m.type = PCTL_BW;
	m.u.bw = (struct pctl_bw){100000000, 1000, 2000, PCTL_SRC_PROCNETDEV, 2, bw};
	ctl_seed("valid-bw", &m);
	st.st = (struct vsp_task_stat){.pid = 100,
	                               .cpu = 1,
	                               .park = VSP_PARK_STOP,
	                               .nthreads = 4,
	                               .resv = {10000000, 2000000, 10000000, 0},
	                               .periods = 50,
	                               .nwin = 2};
	st.st.win[0] = st.st.resv;
	st.st.win[0].deadline = 4000000;
	st.st.resv = st.st.win[0];
	st.st.win[1] = (struct vsp_resv){10000000, 1000000, 2000000, 5000000};
	m.type = PCTL_TASK_STATS;
	m.u.stats = (struct pctl_task_stats){1, &st};
	ctl_seed("valid-task-stats", &m);
	m.type = PCTL_CONSTRAINT_ACK;
	m.u.cack = (struct pctl_constraint_ack){9, -22, "bsp-64", "slice 5ms > deadline 4ms"};
	ctl_seed("valid-constraint-ack", &m);
	m.type = PCTL_NODE_INFO;
	m.u.info = (struct pctl_node_info){1000000, VSP_SELFTEST_DONE, 900000};
	ctl_seed("valid-node-info", &m);
}

static void ctl_controller_seeds(void)
{
	struct pctl_msg m = {.type = PCTL_HELLO_ACK};

	m.u.hello_ack = (struct pctl_hello_ack){0, 1000, 99, ""};
	ctl_seed("valid-hello-ack", &m);
	m.type = PCTL_CONSTRAINT;
	m.u.cons = (struct pctl_constraint){.gen = 9, .nwin = 1, .job = "bsp-64"};
	m.u.cons.win[0] = (struct vsp_resv){10000000, 4000000, 0, 0};
	ctl_seed("valid-constraint", &m);
	m.u.cons.nwin = 2;
	m.u.cons.win[0].deadline = 5000000;
	m.u.cons.win[1] = (struct vsp_resv){10000000, 2000000, 5000000, 5000000};
	ctl_seed("valid-constraint-2win", &m);
	/* the same with slice > deadline in window 2: refused, but named (peek) */
	int n = pctl_encode(&m, buf, sizeof(buf));
	buf[4 + 8 + 1 + 32 + 8 + 3] = 0x7f;
	seed("proto_ctl", "constraint-bad-window", buf, n);
	m.type = PCTL_EPOCH;
	m.u.epoch.realtime_ns = 1700000000000000000ULL;
	ctl_seed("valid-epoch", &m);
}

static void vsched_seeds(void)
{
	struct vsp_request q = {.type = VSP_ADD,
	                        .pid = 100,
	                        .cpu = -1,
	                        .park = VSP_PARK_DEFAULT,
	                        .resv = {10000000, 2000000, 0, 0}};
	struct vsp_task_stat t[2] = {
	    {.pid = 100,
	     .cpu = 0,
	     .park = VSP_PARK_IDLE,
	     .nthreads = 1,
	     .resv = {10000000, 2000000, 10000000, 0},
	     .cpu_ns = 5000,
	     .nwin = 1},
	    {.pid = 101, .cpu = 1, .park = VSP_PARK_STOP, .nthreads = 2, .misses = 1, .nwin = 2}};
	struct vsp_reply r = {.status = 0, .msg = "ok", .ntasks = 2, .tasks = t};

	seed("proto_vsched", "valid-add", buf, vsp_encode_request(&q, buf, sizeof(buf)));
	q.nwin = 2;
	q.win[0] = (struct vsp_resv){10000000, 1000000, 4000000, 0};
	q.win[1] = (struct vsp_resv){10000000, 1000000, 4000000, 5000000};
	seed("proto_vsched", "valid-add-2win", buf, vsp_encode_request(&q, buf, sizeof(buf)));
	q.type = VSP_SET;
	seed("proto_vsched", "valid-set", buf, vsp_encode_request(&q, buf, sizeof(buf)));
	q.type = VSP_DEL;
	seed("proto_vsched", "valid-del", buf, vsp_encode_request(&q, buf, sizeof(buf)));
	q.type = VSP_LIST;
	seed("proto_vsched", "valid-list", buf, vsp_encode_request(&q, buf, sizeof(buf)));
	q.type = VSP_EPOCH;
	q.epoch_realtime_ns = 1700000000000000000ULL;
	seed("proto_vsched", "valid-epoch", buf, vsp_encode_request(&q, buf, sizeof(buf)));
	t[1].win[0] = (struct vsp_resv){20000000, 1000000, 4000000, 0};
	t[1].win[1] = (struct vsp_resv){20000000, 1000000, 4000000, 10000000};
	t[1].resv = t[1].win[0];
	seed("proto_vsched", "valid-reply-list", buf, vsp_encode_reply(&r, buf, sizeof(buf)));
	r = (struct vsp_reply){.status = -22, .msg = "slice 5ms > deadline 4ms"};
	seed("proto_vsched", "valid-reply-error", buf, vsp_encode_reply(&r, buf, sizeof(buf)));
}

static void admin_request_seeds(void)
{
	struct padm_request q = {.type = PADM_STATUS};

	seed("proto_admin", "valid-status", buf, padm_encode_request(&q, buf, sizeof(buf)));
	q.type = PADM_JOB_LIST;
	seed("proto_admin", "valid-job-list", buf, padm_encode_request(&q, buf, sizeof(buf)));
	q.type = PADM_NODE_LIST;
	seed("proto_admin", "valid-node-list", buf, padm_encode_request(&q, buf, sizeof(buf)));
	q.type = PADM_JOB_SHOW;
	strcpy(q.job, "bsp-64");
	seed("proto_admin", "valid-job-show", buf, padm_encode_request(&q, buf, sizeof(buf)));
	q.type = PADM_SET_RATE;
	q.target_milli = 40000;
	seed("proto_admin", "valid-set-rate", buf, padm_encode_request(&q, buf, sizeof(buf)));
	q = (struct padm_request){
	    PADM_JOB_SET, "bsp-64", 0,       PADM_SET_ALL, PADM_ALGO_FLOATING, PADM_AGG_MEAN, 2000,
	    1500.5,       2000000,  1000000, 100000,       200000000,          80000};
	seed("proto_admin", "valid-job-set", buf, padm_encode_request(&q, buf, sizeof(buf)));
}

static void admin_reply_seeds(void)
{
	struct padm_job j = {.name = "bsp-64",
	                     .state = PADM_ST_STABLE,
	                     .algo = PADM_ALGO_FLOATING,
	                     .flags = PADM_JF_RMAX_KNOWN,
	                     .klass = PADM_CLASS_DEVIL,
	                     .nranks = 4,
	                     .nnodes = 2,
	                     .target_milli = 40000,
	                     .current_pct = 39.5,
	                     .err_pct = -0.5,
	                     .r_max = 1000,
	                     .eps_pct = 2,
	                     .period = 10000000,
	                     .slice = 4000000,
	                     .u_pct = 40,
	                     .eff = NAN,
	                     .need_u_pct = NAN,
	                     .u_max_pct = 100,
	                     .reason = "on target"};
	struct padm_node nd = {.name = "node-1",
	                       .up = 1,
	                       .ncpus = 8,
	                       .nprocs = 2,
	                       .njobs = 1,
	                       .sum_u = 0.8,
	                       .mem_cap = 10000000000ULL,
	                       .mem_src = PCTL_SRC_PMU,
	                       .net_src = PCTL_SRC_SOCKDIAG,
	                       .hb_age_ms = 120};
	struct padm_rank rk = {.job = "bsp-64",
	                       .node = "node-1",
	                       .rank = 1,
	                       .pid = 100,
	                       .up = 1,
	                       .rate = 250,
	                       .period = 10000000,
	                       .slice = 4000000,
	                       .gen = 9};
	struct padm_slot sl[2] = {{0, "node-1", "bsp-64"}, {1, "node-1", "mem-8"}};
	struct padm_reply r = {.status = 0,
	                       .reason = "1 job",
	                       .njobs = 1,
	                       .nnodes = 1,
	                       .nranks = 1,
	                       .jobs = &j,
	                       .nodes = &nd,
	                       .ranks = &rk};

	seed("proto_admin", "valid-reply-status", buf, padm_encode_reply(&r, buf, sizeof(buf)));
	r.plan = (struct padm_plan){PADM_PF_ON | PADM_PF_PLANNED | PADM_PF_COMPLETE,
	                            8,
	                            4,
	                            2500000,
	                            2,
	                            2,
	                            1,
	                            {{10000000, 5000000, 5000000, 0}}};
	r.nslots = 2;
	r.slots = sl;
	seed("proto_admin", "valid-reply-plan", buf, padm_encode_reply(&r, buf, sizeof(buf)));
	r = (struct padm_reply){.status = -2, .reason = "no job bsp-65"};
	seed("proto_admin", "valid-reply-error", buf, padm_encode_reply(&r, buf, sizeof(buf)));
}

/* A config printed (-n) from its defaults, as a seed. */
static void config_seed(const char *harness, const struct fuzz_config *fc)
{
	void *cfg = calloc(1, fc->size);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL || cfg == NULL)
		exit(1);
	fc->defaults(cfg);
	fc->print(f, cfg);
	fclose(f);
	seed(harness, "valid-defaults", text, (int)len);
	free(text);
	free(cfg);
}

static void config_seeds(void)
{
	config_seed("config_vsched", &fuzz_config_vsched);
	config_seed("config_agent", &fuzz_config_agent);
	config_seed("config_controller", &fuzz_config_controller);
	seed_text("config_vsched", "valid-small", "utilization_cap = 0.5;\npark = \"idle\";\n");
	seed_text("config_agent", "valid-small",
	          "node_name = \"n1\";\ncontroller = \"tcp://head:7710\";\ninsecure = true;\n");
	seed_text("config_controller", "valid-small",
	          "coschedule = true;\nframe = \"100ms\";\nslot = \"10ms\";\n");
}

static void state_seeds(void)
{
	struct ctld_config c;
	struct state_job j[2];
	char path[512], why[256];

	ctld_config_defaults(&c);
	j[0] = (struct state_job){.name = "bsp-64", .target = 40, .set = c.job};
	j[1] = (struct state_job){.name = "mem\"8", .target = 0, .set = c.job};
	j[1].set.algo = PADM_ALGO_ADAPTIVE;
	j[1].set.r_max = 1500.25;
	j[1].set.r_max_given = true;
	seed_text("state", "valid-empty", "version = 1;\nlast_gen = \"0\";\njobs = ();\n");
	snprintf(path, sizeof(path), "%s/state/valid-two-jobs", outdir);
	if (state_save(path, 1234567, j, 2, why, sizeof(why)) != 0) {
		fprintf(stderr, "seedgen: %s\n", why);
		exit(1);
	}
}

static void text_seeds(void)
{
	static const char *const durations[] = {"10ms", "1.5s",   "250us", "2d",
	                                        "0ns",  "1.125m", "3h"};
	static const char *const modes[] = {"auto", "mpi:Allreduce", "mpi:MPI_Waitall:2",
	                                    "pcontrol"};
	char name[32];

	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		snprintf(name, sizeof(name), "valid-%zu", i);
		seed_text("duration", name, durations[i]);
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(name, sizeof(name), "valid-%zu", i);
		seed_text("mpiprog", name, modes[i]);
	}
	seed_text("spank_conf", "valid-site",
	          "agent=ipc:///run/vsched/apps.sock controller=tcp://head:7711 "
	          "progress=mpi:Allreduce:4 user_rate=no mpi_dir=/opt/vsched/mpi");
	seed_text("spank_conf", "option-rate", "40%");
	seed_text("spank_conf", "option-job", "lammps.7");
	seed_text("spank_conf", "option-progress", "mpi:Barrier");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	apprate_seeds();
	ctl_agent_seeds();
	ctl_controller_seeds();
	vsched_seeds();
	admin_request_seeds();
	admin_reply_seeds();
	config_seeds();
	state_seeds();
	text_seeds();
	return 0;
}
