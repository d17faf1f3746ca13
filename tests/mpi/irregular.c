/*
 * irregular: an unmodified MPI program whose main loop is interrupted by irregular calls,
 * for the libapprate-mpi tests. Set-up: a few broadcasts and a barrier. Each iteration: a
 * ring exchange (MPI_Sendrecv to the right, from the left) and an MPI_Allreduce. At
 * pseudo-random iterations (about one in eight, the same on every rank) an "output step":
 * MPI_Reduce of a diagnostic to rank 0, which prints it, and an MPI_Barrier. Polling calls
 * (MPI_Iprobe, a timing-dependent number of them) are made every iteration.
 *
 *   irregular [-n ITERATIONS]
 * prints "irregular: rank=R iterations=I outputs=K" at the end.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, iters = 300, outputs = 0;
	double params[4] = {1, 2, 3, 4};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 2)
		iters = atoi(argv[2]);
	for (int k = 0; k < 3; k++)
		MPI_Bcast(params, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	unsigned seed = 12345;
	double x = rank, y;
	for (int it = 0; it < iters; it++) {
		int flag = 1, polls = 0;
		MPI_Sendrecv(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, &y, 1, MPI_DOUBLE,
		             (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		while (flag && polls++ < 1 + it % 3) /* polling: varies from call to call */
			MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		x = 0.5 * (x + y);
		MPI_Allreduce(&y, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 8 == 0) { /* output step */
			double d = x, total;
			MPI_Reduce(&d, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			if (rank == 0 && outputs % 10 == 0)
				fprintf(stderr, "irregular: iteration %d diagnostic %g\n", it,
				        total);
			MPI_Barrier(MPI_COMM_WORLD);
			outputs++;
		}
	}
	printf("irregular: rank=%d iterations=%d outputs=%d\n", rank, iters, outputs);
	MPI_Finalize();
	return 0;
}
