/*
 * Unit tests of the controller's state file (controller/state.c):
 *   - round trip: targets, every per-job setting and the last generation come back
 *     exactly, also for names with quotes and backslashes;
 *   - atomicity: a save replaces the file by rename (new inode, no temporary file left);
 *     a save that cannot complete leaves the previous file byte for byte and reports why;
 *   - a missing file is a fresh start (-ENOENT); a corrupt one is refused as a whole with
 *     the file, the job and the field in the reason;
 *   - group commit through the real admin socket (inproc): replies that promise a target
 *     wait in the reply outbox until the end of the loop turn; the end of the turn writes
 *     the state file first, and the replies are still unsent while it already holds what
 *     they tell (admin_flush also asserts that nothing marked is left unwritten); the
 *     turn's changes make one write; a restart from it restores them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "controller.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/test_ctl_state.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/ctl.state", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void sample(struct state_job *j)
{
	memset(j, 0, 2 * sizeof(*j));
	strcpy(j[0].name, "bsp-64");
	j[0].target = 40;
	j[0].set.algo = PADM_ALGO_ADAPTIVE;
	j[0].set.agg = PADM_AGG_SLOWEST;
	j[0].set.eps_pct = 3;
	j[0].set.r_max = 1234.5678901234567;
	j[0].set.r_max_given = false;
	j[0].set.delta_period = 2000000;
	j[0].set.min_period = 1000000;
	j[0].set.min_slice = 100000;
	j[0].set.initial_period = 200000000;
	j[0].set.u_max_pct = 100;
	strcpy(j[1].name, "we\"ird\\name");
	j[1].target = 33.333;
	j[1].set.algo = PADM_ALGO_LINEAR;
	j[1].set.agg = PADM_AGG_MEAN;
	j[1].set.eps_pct = 1.5;
	j[1].set.r_max = 500;
	j[1].set.r_max_given = true;
	j[1].set.delta_period = 1500;
	j[1].set.min_period = 250000;
	j[1].set.min_slice = 50000;
	j[1].set.initial_period = 7ULL * 24 * 3600 * 1000000000ULL;
	j[1].set.u_max_pct = 62.5;
}

static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_roundtrip(void **state)
{
	struct state_job in[2], *out = NULL;
	uint64_t gen = 0;
	char why[256] = "";
	int n = 0;
	(void)state;

	assert_int_equal(state_load(path, &gen, &out, &n, why, sizeof(why)), -ENOENT);
	sample(in);
	assert_int_equal(state_save(path, 7710895408033038000ULL, in, 2, why, sizeof(why)), 0);
	assert_int_equal(state_load(path, &gen, &out, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_true(gen == 7710895408033038000ULL);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(out[i].name, in[i].name);
		assert_true(out[i].target == in[i].target);
		assert_int_equal(out[i].set.algo, in[i].set.algo);
		assert_int_equal(out[i].set.agg, in[i].set.agg);
		assert_true(out[i].set.u_max_pct == in[i].set.u_max_pct);
		assert_true(out[i].set.eps_pct == in[i].set.eps_pct);
		assert_true(out[i].set.r_max == in[i].set.r_max);
		assert_int_equal(out[i].set.r_max_given, in[i].set.r_max_given);
		assert_int_equal(out[i].set.delta_period, in[i].set.delta_period);
		assert_int_equal(out[i].set.min_period, in[i].set.min_period);
		assert_int_equal(out[i].set.min_slice, in[i].set.min_slice);
		assert_int_equal(out[i].set.initial_period, in[i].set.initial_period);
	}
	free(out);
	/* no jobs at all */
	assert_int_equal(state_save(path, 1, NULL, 0, why, sizeof(why)), 0);
	assert_int_equal(state_load(path, &gen, &out, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(gen, 1);
	free(out);
}

static void test_atomic_replace(void **state)
{
	struct state_job in[2], *out = NULL;
	char why[256] = "", tmp[200], before[4096], after[4096];
	struct stat st1, st2;
	uint64_t gen;
	FILE *f;
	size_t blen, alen;
	int n;
	(void)state;

	sample(in);
	assert_int_equal(state_save(path, 5, in, 2, why, sizeof(why)), 0);
	assert_int_equal(stat(path, &st1), 0);
	assert_int_equal(state_save(path, 6, in, 1, why, sizeof(why)), 0);
	assert_int_equal(stat(path, &st2), 0);
	assert_true(st1.st_ino != st2.st_ino); /* replaced by rename, never rewritten */
	assert_int_equal(count_files(), 1);    /* no temporary file left */

	/* a save that cannot write its temporary file leaves the old file as it was */
	f = fopen(path, "r");
	blen = fread(before, 1, sizeof(before), f);
	fclose(f);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(mkdir(tmp, 0700), 0); /* the temporary path is taken by a directory */
	assert_int_equal(state_save(path, 7, in, 2, why, sizeof(why)), -1);
	assert_non_null(strstr(why, ".tmp."));
	f = fopen(path, "r");
	alen = fread(after, 1, sizeof(after), f);
	fclose(f);
	assert_int_equal(alen, blen);
	assert_memory_equal(after, before, blen);
	assert_int_equal(state_load(path, &gen, &out, &n, why, sizeof(why)), 0);
	assert_int_equal(gen, 6);
	assert_int_equal(n, 1);
	free(out);
	rmdir(tmp);

	/* a directory that does not exist: refused with the reason, nothing created */
	assert_int_equal(state_save("/nonexistent-dir/x.state", 1, in, 1, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "No such file or directory"));
}

/* Writes text as the state file and expects it refused with a reason containing want. */
static void refused(const char *text, const char *want)
{
	struct state_job *out = (void *)1;
	uint64_t gen = 0;
	char why[300] = "";
	int n = -1;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(state_load(path, &gen, &out, &n, why, sizeof(why)), -EINVAL);
	assert_null(out);
	assert_int_equal(n, 0);
	if (strstr(why, want) == NULL || strstr(why, path) == NULL)
		fail_msg("reason '%s' does not name %s and '%s'", why, path, want);
}

#define JOB_OK                                                                                     \
	"name = \"a\"; target = 40.0; algorithm = \"adaptive\"; aggregate = \"slowest\"; "         \
	"epsilon = 3.0; r_max = 0.0; r_max_given = false; delta_period = \"2ms\"; "                \
	"min_period = \"1ms\"; min_slice = \"100us\"; initial_period = \"200ms\";"

static void test_corrupt_refused(void **state)
{
	(void)state;
	refused("version = 1;\nlast_gen = \"1\";\njobs = ( { " JOB_OK " } ", ":3:");
	refused("", "version");
	refused("version = 2; last_gen = \"1\"; jobs = ();", "version");
	refused("version = 1; last_gen = \"x\"; jobs = ();", "last_gen");
	refused("version = 1; last_gen = \"12junk\"; jobs = ();", "last_gen");
	refused("version = 1; last_gen = \"1\";", "jobs");
	refused("version = 1; last_gen = \"1\"; jobs = ( { name = \"a\"; target = 400.0; } );",
	        "job 1: a: target");
	refused("version = 1; last_gen = \"1\"; jobs = ( { name = \"has blank\"; } );",
	        "job 1: name");
	refused("version = 1; last_gen = \"1\"; jobs = ( { " JOB_OK " }, { " JOB_OK " } );",
	        "job a listed twice");
	refused("version = 1; last_gen = \"1\"; jobs = ( { name = \"a\"; target = 40.0; "
	        "algorithm = \"fast\"; } );",
	        "job 1: a: algorithm");
	refused("version = 1; last_gen = \"1\"; jobs = ( { name = \"a\"; target = 40.0; "
	        "algorithm = \"linear\"; aggregate = \"mean\"; epsilon = 3.0; r_max = -1.0; } );",
	        "job 1: a: r_max");
	refused("version = 1; last_gen = \"1\"; jobs = ( { name = \"a\"; target = 40.0; "
	        "algorithm = \"linear\"; aggregate = \"mean\"; epsilon = 3.0; r_max = 1.0; "
	        "r_max_given = true; delta_period = \"2\"; min_period = \"1ms\"; "
	        "min_slice = \"100us\"; initial_period = \"200ms\"; } );",
	        "job 1: a: a period or slice");
	refused("version = 1; last_gen = \"1\"; jobs = ( { name = \"a\"; target = 40.0; "
	        "algorithm = \"linear\"; aggregate = \"mean\"; epsilon = 3.0; r_max = 1.0; "
	        "r_max_given = true; delta_period = \"2ms\"; min_period = \"10ms\"; "
	        "min_slice = \"100us\"; initial_period = \"5ms\"; } );",
	        "initial_period < min_period");
	refused("version = 1; last_gen = \"1\"; jobs = ( { " JOB_OK " u_max = 0.0; } );",
	        "job 1: a: u_max");
	refused("version = 1; last_gen = \"1\"; jobs = ( { " JOB_OK " u_max = \"all\"; } );",
	        "job 1: a: u_max");
}

/* A state file written before u_max existed: the job gets the default, 100 %. */
static void test_without_u_max(void **state)
{
	struct state_job *out = NULL;
	uint64_t gen = 0;
	char why[300] = "";
	int n = 0;
	FILE *f = fopen(path, "w");
	(void)state;

	assert_non_null(f);
	fputs("version = 1; last_gen = \"1\"; jobs = ( { " JOB_OK " } );", f);
	fclose(f);
	assert_int_equal(state_load(path, &gen, &out, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 1);
	assert_true(out[0].set.u_max_pct == 100.0);
	free(out);
}

/* ---- group commit through the admin socket ---- */

static double disk_target(const char *name)
{
	struct state_job *js = NULL;
	uint64_t gen;
	char why[256];
	double t = -1;
	int n;

	if (state_load(path, &gen, &js, &n, why, sizeof(why)) != 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(js[i].name, name) == 0)
			t = js[i].target;
	free(js);
	return t;
}

static void *client(void *zctx, const char *ep, const char *job, int32_t target_milli)
{
	struct padm_request q = {.type = PADM_SET_RATE, .target_milli = target_milli};
	uint8_t buf[512];
	void *c = zmq_socket(zctx, ZMQ_REQ);
	int n, zero = 0;

	assert_non_null(c);
	zmq_setsockopt(c, ZMQ_LINGER, &zero, sizeof(zero));
	assert_int_equal(zmq_connect(c, ep), 0);
	snprintf(q.job, sizeof(q.job), "%s", job);
	n = padm_encode_request(&q, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(zmq_send(c, buf, (size_t)n, 0), n);
	return c;
}

/* The reply waiting on c within ms (its reason in why), or -1000 when none. */
static int reply_of(void *c, int ms, char *why, size_t len)
{
	zmq_pollitem_t it = {.socket = c, .events = ZMQ_POLLIN};
	struct padm_reply r;
	uint8_t buf[4096];
	char err[200];
	int n;

	if (zmq_poll(&it, 1, ms) != 1)
		return -1000;
	n = zmq_recv(c, buf, sizeof(buf), 0);
	assert_true(n > 0);
	assert_int_equal(padm_decode_reply(buf, (size_t)n, &r, err, sizeof(err)), 0);
	snprintf(why, len, "%s", r.reason);
	padm_reply_release(&r);
	return r.status;
}

static void test_reply_after_commit(void **state)
{
	struct ctld d, r;
	zmq_pollitem_t it;
	char why[300];
	void *a, *b;
	(void)state;

	memset(&d, 0, sizeof(d));
	ctld_config_defaults(&d.cfg);
	snprintf(d.cfg.state_file, sizeof(d.cfg.state_file), "%s", path);
	snprintf(d.cfg.admin, sizeof(d.cfg.admin), "inproc://test-ctl-state-admin");
	d.zctx = zmq_ctx_new();
	assert_non_null(d.zctx);
	assert_int_equal(admin_open(&d), 0);
	assert_int_equal(jobs_get(&d, "J", 1), 0);
	assert_int_equal(jobs_get(&d, "K", 1), 1);

	/* one turn: two administrators set targets (no node yet: committed at once) */
	a = client(d.zctx, d.cfg.admin, "J", 40000);
	b = client(d.zctx, d.cfg.admin, "K", 55000);
	it.socket = d.admin;
	it.events = ZMQ_POLLIN;
	while (d.replies.n < 2) { /* until both requests have been read */
		assert_int_equal(zmq_poll(&it, 1, 1000), 1);
		admin_recv(&d, 2);
	}
	assert_true(d.jobs[0]->control.target_pct == 40 && d.jobs[1]->control.target_pct == 55);
	/* the replies are held: nothing sent, nothing written yet */
	assert_int_equal(d.replies.n, 2);
	assert_int_equal(reply_of(a, 50, why, sizeof(why)), -1000);
	assert_int_equal(reply_of(b, 0, why, sizeof(why)), -1000);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(d.state_writes, 0);

	/* the end of the turn, as loop_end_turn does it: the nodes' messages, one write ... */
	agents_flush(&d, 3);
	assert_int_equal(persist_commit(&d, 3), 0);
	assert_int_equal(d.state_writes, 1);
	assert_true(disk_target("J") == 40 && disk_target("K") == 55);
	/* ... while the replies that tell of it have not left yet, then the replies */
	assert_int_equal(reply_of(a, 50, why, sizeof(why)), -1000);
	assert_int_equal(d.replies.n, 2);
	admin_flush(&d);
	assert_int_equal(d.replies.n, 0);
	assert_int_equal(reply_of(a, 1000, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "job J: target 40% set"));
	assert_int_equal(reply_of(b, 1000, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "job K: target 55% set"));
	/* a turn that changes nothing writes nothing */
	loop_end_turn(&d, 4);
	assert_int_equal(d.state_writes, 1);

	/* a restart after that turn restores what the administrators were told */
	memset(&r, 0, sizeof(r));
	ctld_config_defaults(&r.cfg);
	snprintf(r.cfg.state_file, sizeof(r.cfg.state_file), "%s", path);
	assert_int_equal(persist_restore(&r, 10, why, sizeof(why)), 0);
	assert_int_equal(r.njobs, 2);
	assert_true(r.jobs[jobs_find(&r, "J")]->control.target_pct == 40);
	assert_true(r.jobs[jobs_find(&r, "K")]->control.target_pct == 55);
	jobs_free(&r);

	zmq_close(a);
	zmq_close(b);
	admin_close(&d);
	jobs_free(&d);
	zmq_ctx_term(d.zctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_atomic_replace, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_without_u_max, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reply_after_commit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
