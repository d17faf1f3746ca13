/*
 * jacobi: an unmodified MPI program for the libapprate-mpi tests and benchmarks (it knows
 * nothing of vsched). 2-D Jacobi relaxation of an N x N grid split in row blocks; every
 * iteration: halo exchange with the neighbours (Irecv, Isend, Waitall), one sweep, and an
 * MPI_Allreduce of the residual.
 *
 *   jacobi [-n ITERATIONS] [-d SECONDS] [-s N] [-p] [-o K] [-v]
 *
 * -n stops after ITERATIONS (default 200), -d after SECONDS of wall time instead (rank 0
 * decides, broadcast in the allreduce), -s grid size (default 256), -p calls
 * MPI_Pcontrol(1) once per iteration, -o K gathers a diagnostic to rank 0 every K
 * iterations (an output step, MPI_Gather), -v prints "jacobi: t=SECONDS iter=I" on rank 0
 * every second. At the end each rank prints
 *   jacobi: rank=R iterations=I seconds=S rate=I/S
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, n = 256, iters = 200, pcontrol = 0, out_every = 0, verbose = 0, c;
	double duration = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	while ((c = getopt(argc, argv, "n:d:s:po:v")) != -1) {
		switch (c) {
		case 'n':
			iters = atoi(optarg);
			break;
		case 'd':
			duration = atof(optarg);
			iters = 0;
			break;
		case 's':
			n = atoi(optarg);
			break;
		case 'p':
			pcontrol = 1;
			break;
		case 'o':
			out_every = atoi(optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			if (rank == 0)
				fprintf(
				    stderr,
				    "usage: jacobi [-n ITER] [-d SEC] [-s N] [-p] [-o K] [-v]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	int rows = n / size + 2, up = rank - 1, down = rank + 1;
	double *a = calloc((size_t)rows * n, sizeof(double));
	double *b = calloc((size_t)rows * n, sizeof(double));
	if (!a || !b)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank == 0)
		for (int j = 0; j < n; j++)
			a[j] = b[j] = 100.0; /* hot top edge */
	double t0 = MPI_Wtime(), next_print = 1.0, diag[2],
	       *all = malloc(2 * sizeof(double) * size);
	int it = 0;
	for (;;) {
		MPI_Request q[4];
		int nq = 0;
		if (up >= 0) {
			MPI_Irecv(a, n, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &q[nq++]);
			MPI_Isend(a + n, n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &q[nq++]);
		}
		if (down < size) {
			MPI_Irecv(a + (size_t)(rows - 1) * n, n, MPI_DOUBLE, down, 1,
			          MPI_COMM_WORLD, &q[nq++]);
			MPI_Isend(a + (size_t)(rows - 2) * n, n, MPI_DOUBLE, down, 0,
			          MPI_COMM_WORLD, &q[nq++]);
		}
		MPI_Status st[4];
		MPI_Waitall(nq, q, st);
		double res = 0;
		for (int i = 1; i < rows - 1; i++)
			for (int j = 1; j < n - 1; j++) {
				double v = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
				                   a[i * n + j - 1] + a[i * n + j + 1]);
				res += (v - a[i * n + j]) * (v - a[i * n + j]);
				b[i * n + j] = v;
			}
		double *t = a;
		a = b;
		b = t;
		it++;
		/* residual, and rank 0's "stop" decision riding along */
		double in[2] = {res, rank == 0 && ((iters > 0 && it >= iters) ||
		                                   (iters == 0 && MPI_Wtime() - t0 >= duration))},
		       sum[2];
		MPI_Allreduce(in, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (pcontrol)
			MPI_Pcontrol(1);
		if (out_every > 0 && it % out_every == 0) {
			diag[0] = res;
			diag[1] = it;
			MPI_Gather(diag, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		}
		if (verbose && rank == 0 && MPI_Wtime() - t0 >= next_print) {
			printf("jacobi: t=%.3f iter=%d\n", MPI_Wtime() - t0, it);
			fflush(stdout);
			next_print += 1.0;
		}
		if (sum[1] > 0)
			break;
	}
	double secs = MPI_Wtime() - t0;
	printf("jacobi: rank=%d iterations=%d seconds=%.3f rate=%.3f\n", rank, it, secs, it / secs);
	free(a);
	free(b);
	free(all);
	MPI_Finalize();
	return 0;
}
