/*
 * mpi_overhead: cost of libapprate-mpi per wrapped MPI call, against the bare call, in one
 * process. Run with the interposer preloaded (bench/mpi_overhead.sh): MPI_Allreduce then
 * goes through the wrapper, PMPI_Allreduce is the bare call; batches of each alternate, so
 * both see the same machine. One rank, one int: the cheapest real collective.
 *
 *   mpi_overhead [BATCHES] [CALLS_PER_BATCH]
 * prints: bare_ns=MEDIAN wrapped_ns=MEDIAN overhead_ns=MEDIAN(wrapped - bare, paired)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
	int batches = argc > 1 ? atoi(argv[1]) : 2000, calls = argc > 2 ? atoi(argv[2]) : 1000;
	int in = 1, out = 0;
	MPI_Init(&argc, &argv);
	double *bare = malloc(sizeof(double) * batches),
	       *wrapped = malloc(sizeof(double) * batches);
	double *diff = malloc(sizeof(double) * batches);
	for (int i = 0; i < 10 * calls; i++) /* warm up; lets auto find its period */
		MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int i = 0; i < calls; i++)
			PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		double t1 = now_ns();
		for (int i = 0; i < calls; i++)
			MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		double t2 = now_ns();
		bare[b] = (t1 - t0) / calls;
		wrapped[b] = (t2 - t1) / calls;
		diff[b] = wrapped[b] - bare[b];
	}
	printf("bare_ns=%.1f wrapped_ns=%.1f overhead_ns=%.1f\n", median(bare, batches),
	       median(wrapped, batches), median(diff, batches));
	MPI_Finalize();
	return 0;
}
