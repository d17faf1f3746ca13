/*
 * Unit tests of libapprate-mpi's period finder (libapprate-mpi/period.c) on synthetic call
 * sequences, and of the VSCHED_PROGRESS parser and the ldd parser (common/): the anchor
 * found occurs once per iteration, also with irregular output steps, a set-up phase, a
 * symbol called twice per iteration, and a variable inner loop; a sequence without a
 * period yields none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpi_find.h"
#include "mpi_progress.h"
#include "period.h"

static struct period *fresh(void)
{
	struct period *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	return p;
}

static void rec(struct period *p, const uint32_t *s, int n)
{
	for (int i = 0; i < n; i++)
		period_record(p, s[i]);
}

/* Iterations of [10 11 12 13], an output step [90 91] every 7th; setup before. */
static void test_irregular_outputs(void **state)
{
	(void)state;
	struct period *p = fresh();
	const uint32_t setup[] = {1, 1, 1, 2}, body[] = {10, 11, 12, 13}, out[] = {90, 91};
	struct period_found f;
	rec(p, setup, 4);
	for (int it = 1; it <= 100; it++) {
		rec(p, body, 4);
		if (it % 7 == 0)
			rec(p, out, 2);
	}
	assert_true(period_find(p, 0, 0, &f));
	assert_true(f.anchor >= 10 && f.anchor <= 13);
	assert_int_equal(f.seglen, 4);
	assert_int_equal(f.occurrences, 100);
	assert_true(f.modal_pct >= 80);
	free(p);
}

/* A symbol twice per iteration between different calls (A B A C): its segments alternate
 * (50 % each); it qualifies as 2 occurrences per iteration. */
static void test_twice_per_iteration(void **state)
{
	(void)state;
	struct period *p = fresh();
	const uint32_t body[] = {5, 6, 5, 7};
	struct period_found f;
	for (int it = 0; it < 50; it++)
		rec(p, body, 4);
	assert_true(period_find(p, 0, 0, &f));
	assert_int_equal(f.occurrences / f.per_iter, 50);
	assert_int_equal(f.seglen, 4);
	free(p);
}

/* A molecular-dynamics step as LAMMPS makes it on 2 ranks: forward and reverse halo
 * exchanges through the same call sites twice each (every site twice per step), a
 * neighbour-list rebuild with other calls every 20 steps, a thermo reduction every 100. */
static void test_every_site_twice(void **state)
{
	(void)state;
	struct period *p = fresh();
	const uint32_t fwd[] = {1, 2, 3}, rev[] = {4, 5, 6}, rebuild[] = {7, 8, 9, 7, 8, 9};
	struct period_found f;
	for (int step = 1; step <= 300; step++) {
		rec(p, fwd, 3);
		rec(p, fwd, 3);
		rec(p, rev, 3);
		rec(p, rev, 3);
		if (step % 20 == 0)
			rec(p, rebuild, 6);
		if (step % 100 == 0)
			period_record(p, 10);
	}
	assert_true(period_find(p, 0, 0, &f));
	assert_int_equal(f.per_iter, 2);
	assert_int_equal(f.seglen, 12);
	assert_int_equal(f.occurrences / 2, 300); /* 3,693 events: all in the window */
	free(p);
}

/* An inner loop of varying length: the inner iteration is the regular one. */
static void test_inner_loop(void **state)
{
	(void)state;
	struct period *p = fresh();
	struct period_found f;
	int inner = 0;
	for (int step = 0; step < 40; step++) {
		period_record(p, 50);
		for (int k = 0; k < 18 + step % 5; k++, inner++) {
			period_record(p, 60);
			period_record(p, 61);
		}
		period_record(p, 70);
	}
	assert_true(period_find(p, 0, 0, &f));
	assert_true(f.anchor == 60 || f.anchor == 61);
	assert_int_equal(f.occurrences, (uint64_t)inner);
	free(p);
}

/* No period: pseudo-random symbols. Too few repetitions: none either. */
static void test_no_period(void **state)
{
	(void)state;
	struct period *p = fresh();
	struct period_found f;
	uint32_t x = 1;
	for (int i = 0; i < 3000; i++) {
		x = x * 1103515245u + 12345u;
		period_record(p, 1 + (x >> 16) % 40);
	}
	assert_false(period_find(p, 0, 0, &f));
	free(p);
	p = fresh();
	const uint32_t body[] = {3, 4, 5};
	for (int it = 0; it < 4; it++)
		rec(p, body, 3);
	assert_false(period_find(p, 0, 0, &f));
	free(p);
}

/* A preferred anchor that still qualifies is kept; since counts only later occurrences;
 * after a phase change the new loop's anchor is found. */
static void test_prefer_since_phase(void **state)
{
	(void)state;
	struct period *p = fresh();
	const uint32_t a[] = {20, 21, 22}, b[] = {30, 31};
	struct period_found f;
	for (int it = 0; it < 100; it++)
		rec(p, a, 3);
	assert_true(period_find(p, 22, 0, &f));
	assert_int_equal(f.anchor, 22);
	assert_true(period_find(p, 0, 150, &f));
	assert_int_equal(f.occurrences, 50);
	for (int it = 0; it < 3000; it++)
		rec(p, b, 2);
	assert_true(period_find(p, 22, 0, &f));
	assert_true(f.anchor == 30 || f.anchor == 31);
	assert_int_equal(f.seglen, 2);
	free(p);
}

static void test_progress_modes(void **state)
{
	(void)state;
	struct mpiprog m;
	char why[200], buf[100];
	assert_int_equal(mpiprog_parse(NULL, &m, why, sizeof(why)), 0);
	assert_int_equal(m.kind, MPIPROG_AUTO);
	assert_int_equal(mpiprog_parse("mpi:MPI_Allreduce:4", &m, why, sizeof(why)), 0);
	assert_int_equal(m.kind, MPIPROG_CALL);
	assert_int_equal(m.fn, MPIFN_ALLREDUCE);
	assert_int_equal(m.every, 4);
	mpiprog_format(&m, buf, sizeof(buf));
	assert_string_equal(buf, "mpi:Allreduce:4");
	assert_int_equal(mpiprog_parse("mpi:waitall", &m, why, sizeof(why)), 0);
	assert_int_equal(m.fn, MPIFN_WAITALL);
	assert_int_equal(mpiprog_parse("pcontrol", &m, why, sizeof(why)), 0);
	assert_int_equal(m.kind, MPIPROG_PCONTROL);
	const char *bad[] = {"Auto",
	                     "mpi:",
	                     "mpi:foo",
	                     "mpi:Allreduce:0",
	                     "mpi:Allreduce:-1",
	                     "mpi:Allreduce:x",
	                     "mpi:Allreduce:1000000001",
	                     "pcontrol:1",
	                     "mpi:MPI_",
	                     "mpi:Allreduce:2:3"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m.kind = 99;
		assert_int_equal(mpiprog_parse(bad[i], &m, why, sizeof(why)), -1);
		assert_int_equal(m.kind, 99);
		assert_non_null(strstr(why, bad[i]) ? why : strstr(why, "progress mode"));
	}
}

static void test_ldd_parse(void **state)
{
	(void)state;
	const char *text = "\tlinux-vdso.so.1 (0x00007ffd)\n"
	                   "\tlibmpi.so.40 => /lib/x86_64-linux-gnu/libmpi.so.40 (0x7f00)\n"
	                   "\t/lib64/ld-linux-x86-64.so.2 (0x7f01)\n"
	                   "\tlibfoo.so => not found\n"
	                   "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f02)";
	char names[64];
	assert_int_equal(mpi_find_parse_ldd(text, names, sizeof(names)), 2);
	assert_string_equal(names, "libmpi.so.40");
	assert_string_equal(names + strlen(names) + 1, "libc.so.6");
	assert_int_equal(mpi_find_parse_ldd(text, names, 14), 1); /* truncated cleanly */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_irregular_outputs), cmocka_unit_test(test_twice_per_iteration),
	    cmocka_unit_test(test_every_site_twice),  cmocka_unit_test(test_inner_loop),
	    cmocka_unit_test(test_no_period),         cmocka_unit_test(test_prefer_since_phase),
	    cmocka_unit_test(test_progress_modes),    cmocka_unit_test(test_ldd_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
