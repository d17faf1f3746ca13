/*
 * The Fortran wrappers (mpif.h and `use mpi`): each wrapped function under the four names
 * compilers use (mpi_allreduce_, mpi_allreduce__, mpi_allreduce, MPI_ALLREDUCE), calling
 * the implementation's Fortran PMPI entry (pmpi_allreduce_, exported by Open MPI's
 * libmpi_mpifh and MPICH's libmpichfort). Fortran passes every argument by reference and
 * none of these functions takes a CHARACTER argument, so a wrapper passes its N pointers
 * through unchanged whatever their types. mpiw_depth keeps an implementation that builds
 * its Fortran binding on the C MPI_ functions (MPICH) from counting a call twice.
 * The mpi_f08 module's entry points are not wrapped (docs/mpi.md).
 */
#include "mpiw.h"

#include <mpi.h>

#define P1  void *a1
#define P2  P1, void *a2
#define P3  P2, void *a3
#define P4  P3, void *a4
#define P5  P4, void *a5
#define P6  P5, void *a6
#define P7  P6, void *a7
#define P8  P7, void *a8
#define P9  P8, void *a9
#define P10 P9, void *a10
#define P11 P10, void *a11
#define P12 P11, void *a12
#define P13 P12, void *a13
#define A1  a1
#define A2  A1, a2
#define A3  A2, a3
#define A4  A3, a4
#define A5  A4, a5
#define A6  A5, a6
#define A7  A6, a7
#define A8  A7, a8
#define A9  A8, a9
#define A10 A9, a10
#define A11 A10, a11
#define A12 A11, a12
#define A13 A12, a13

/* Defines the wrapper f_NAME and its four public names. -Wmissing-prototypes: declared
 * just before. */
#define WRAP_F(lname, UNAME, ID, N)                                                                \
	void pmpi_##lname##_(P##N) __attribute__((weak));                                          \
	MPIW_EXPORT void mpi_##lname##_(P##N);                                                     \
	MPIW_EXPORT void mpi_##lname##__(P##N);                                                    \
	MPIW_EXPORT void mpi_##lname(P##N);                                                        \
	MPIW_EXPORT void MPI_##UNAME(P##N);                                                        \
	void mpi_##lname##_(P##N)                                                                  \
	{                                                                                          \
		mpiw_depth++;                                                                      \
		pmpi_##lname##_(A##N);                                                             \
		mpiw_depth--;                                                                      \
		MPIW_EVENT(MPIFN_##ID);                                                            \
	}                                                                                          \
	void mpi_##lname##__(P##N) __attribute__((alias("mpi_" #lname "_")));                      \
	void mpi_##lname(P##N) __attribute__((alias("mpi_" #lname "_")));                          \
	void MPI_##UNAME(P##N) __attribute__((alias("mpi_" #lname "_")));

/* (lower name, UPPER NAME, enum mpifn id, number of Fortran arguments incl. ierror) */
WRAP_F(send, SEND, SEND, 7)
WRAP_F(ssend, SSEND, SSEND, 7)
WRAP_F(bsend, BSEND, BSEND, 7)
WRAP_F(rsend, RSEND, RSEND, 7)
WRAP_F(recv, RECV, RECV, 8)
WRAP_F(isend, ISEND, ISEND, 8)
WRAP_F(issend, ISSEND, ISSEND, 8)
WRAP_F(ibsend, IBSEND, IBSEND, 8)
WRAP_F(irsend, IRSEND, IRSEND, 8)
WRAP_F(irecv, IRECV, IRECV, 8)
WRAP_F(sendrecv, SENDRECV, SENDRECV, 13)
WRAP_F(sendrecv_replace, SENDRECV_REPLACE, SENDRECV_REPLACE, 10)
WRAP_F(wait, WAIT, WAIT, 3)
WRAP_F(waitall, WAITALL, WAITALL, 4)
WRAP_F(waitany, WAITANY, WAITANY, 5)
WRAP_F(waitsome, WAITSOME, WAITSOME, 6)
WRAP_F(test, TEST, TEST, 4)
WRAP_F(testall, TESTALL, TESTALL, 5)
WRAP_F(testany, TESTANY, TESTANY, 6)
WRAP_F(testsome, TESTSOME, TESTSOME, 6)
WRAP_F(probe, PROBE, PROBE, 5)
WRAP_F(iprobe, IPROBE, IPROBE, 6)
WRAP_F(start, START, START, 2)
WRAP_F(startall, STARTALL, STARTALL, 3)
WRAP_F(barrier, BARRIER, BARRIER, 2)
WRAP_F(bcast, BCAST, BCAST, 6)
WRAP_F(reduce, REDUCE, REDUCE, 8)
WRAP_F(allreduce, ALLREDUCE, ALLREDUCE, 7)
WRAP_F(gather, GATHER, GATHER, 9)
WRAP_F(gatherv, GATHERV, GATHERV, 10)
WRAP_F(scatter, SCATTER, SCATTER, 9)
WRAP_F(scatterv, SCATTERV, SCATTERV, 10)
WRAP_F(allgather, ALLGATHER, ALLGATHER, 8)
WRAP_F(allgatherv, ALLGATHERV, ALLGATHERV, 9)
WRAP_F(alltoall, ALLTOALL, ALLTOALL, 8)
WRAP_F(alltoallv, ALLTOALLV, ALLTOALLV, 10)
WRAP_F(reduce_scatter, REDUCE_SCATTER, REDUCE_SCATTER, 7)
WRAP_F(reduce_scatter_block, REDUCE_SCATTER_BLOCK, REDUCE_SCATTER_BLOCK, 7)
WRAP_F(scan, SCAN, SCAN, 7)
WRAP_F(exscan, EXSCAN, EXSCAN, 7)
WRAP_F(ibarrier, IBARRIER, IBARRIER, 3)
WRAP_F(ibcast, IBCAST, IBCAST, 7)
WRAP_F(ireduce, IREDUCE, IREDUCE, 9)
WRAP_F(iallreduce, IALLREDUCE, IALLREDUCE, 8)

/* MPI_INIT(IERROR), MPI_INIT_THREAD(REQUIRED, PROVIDED, IERROR), MPI_FINALIZE(IERROR),
 * MPI_PCONTROL(LEVEL) (no IERROR): written out for their hooks. MPI_Fint is the C type of a
 * Fortran INTEGER. */
#define F_ALIASES(lname, UNAME, PARAMS)                                                            \
	MPIW_EXPORT void mpi_##lname##__ PARAMS __attribute__((alias("mpi_" #lname "_")));         \
	MPIW_EXPORT void mpi_##lname PARAMS __attribute__((alias("mpi_" #lname "_")));             \
	MPIW_EXPORT void MPI_##UNAME PARAMS __attribute__((alias("mpi_" #lname "_")));

void pmpi_init_(MPI_Fint *ierr);
MPIW_EXPORT void mpi_init_(MPI_Fint *ierr);
void mpi_init_(MPI_Fint *ierr)
{
	int provided = MPI_THREAD_SINGLE;

	mpiw_depth++;
	pmpi_init_(ierr);
	mpiw_depth--;
	if (*ierr == MPI_SUCCESS) {
		PMPI_Query_thread(&provided);
		mpiw_init(provided);
	}
}
F_ALIASES(init, INIT, (MPI_Fint * ierr))

void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
MPIW_EXPORT void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	mpiw_depth++;
	pmpi_init_thread_(required, provided, ierr);
	mpiw_depth--;
	if (*ierr == MPI_SUCCESS)
		mpiw_init((int)*provided);
}
F_ALIASES(init_thread, INIT_THREAD, (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr))

void pmpi_finalize_(MPI_Fint *ierr);
MPIW_EXPORT void mpi_finalize_(MPI_Fint *ierr);
void mpi_finalize_(MPI_Fint *ierr)
{
	mpiw_fini();
	mpiw_depth++;
	pmpi_finalize_(ierr);
	mpiw_depth--;
}
F_ALIASES(finalize, FINALIZE, (MPI_Fint * ierr))

void pmpi_pcontrol_(MPI_Fint *level);
MPIW_EXPORT void mpi_pcontrol_(MPI_Fint *level);
void mpi_pcontrol_(MPI_Fint *level)
{
	mpiw_depth++;
	pmpi_pcontrol_(level);
	mpiw_depth--;
	if (mpiw_likely(mpiw_on))
		mpiw_pcontrol((int)*level, __builtin_return_address(0));
}
F_ALIASES(pcontrol, PCONTROL, (MPI_Fint * level))
