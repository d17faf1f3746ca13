/*
 * The C wrappers: MPI_X calls PMPI_X, then reports the call (MPIW_EVENT). One line per
 * function in WRAP_C_LIST: (Name, ID, parameters, arguments), prototypes as in MPI-3.1
 * (Open MPI 4.1 and MPICH 4.0 declare the same). MPI_Init*, MPI_Finalize and MPI_Pcontrol
 * are written out below.
 */
#include "mpiw.h"

#include <mpi.h>

#define WRAP_C_LIST(X)                                                                             \
	X(Send, SEND, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c),            \
	  (b, n, t, d, g, c))                                                                      \
	X(Ssend, SSEND, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c),          \
	  (b, n, t, d, g, c))                                                                      \
	X(Bsend, BSEND, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c),          \
	  (b, n, t, d, g, c))                                                                      \
	X(Rsend, RSEND, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c),          \
	  (b, n, t, d, g, c))                                                                      \
	X(Recv, RECV, (void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Status *st),  \
	  (b, n, t, s, g, c, st))                                                                  \
	X(Isend, ISEND,                                                                            \
	  (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *q),        \
	  (b, n, t, d, g, c, q))                                                                   \
	X(Issend, ISSEND,                                                                          \
	  (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *q),        \
	  (b, n, t, d, g, c, q))                                                                   \
	X(Ibsend, IBSEND,                                                                          \
	  (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *q),        \
	  (b, n, t, d, g, c, q))                                                                   \
	X(Irsend, IRSEND,                                                                          \
	  (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *q),        \
	  (b, n, t, d, g, c, q))                                                                   \
	X(Irecv, IRECV,                                                                            \
	  (void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Request *q),              \
	  (b, n, t, s, g, c, q))                                                                   \
	X(Sendrecv, SENDRECV,                                                                      \
	  (const void *sb, int sn, MPI_Datatype st, int d, int sg, void *rb, int rn,               \
	   MPI_Datatype rt, int s, int rg, MPI_Comm c, MPI_Status *stat),                          \
	  (sb, sn, st, d, sg, rb, rn, rt, s, rg, c, stat))                                         \
	X(Sendrecv_replace, SENDRECV_REPLACE,                                                      \
	  (void *b, int n, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm c,               \
	   MPI_Status *st),                                                                        \
	  (b, n, t, d, sg, s, rg, c, st))                                                          \
	X(Wait, WAIT, (MPI_Request * q, MPI_Status * st), (q, st))                                 \
	X(Waitall, WAITALL, (int n, MPI_Request q[], MPI_Status st[]), (n, q, st))                 \
	X(Waitany, WAITANY, (int n, MPI_Request q[], int *i, MPI_Status *st), (n, q, i, st))       \
	X(Waitsome, WAITSOME, (int n, MPI_Request q[], int *o, int ix[], MPI_Status st[]),         \
	  (n, q, o, ix, st))                                                                       \
	X(Test, TEST, (MPI_Request * q, int *f, MPI_Status *st), (q, f, st))                       \
	X(Testall, TESTALL, (int n, MPI_Request q[], int *f, MPI_Status st[]), (n, q, f, st))      \
	X(Testany, TESTANY, (int n, MPI_Request q[], int *i, int *f, MPI_Status *st),              \
	  (n, q, i, f, st))                                                                        \
	X(Testsome, TESTSOME, (int n, MPI_Request q[], int *o, int ix[], MPI_Status st[]),         \
	  (n, q, o, ix, st))                                                                       \
	X(Probe, PROBE, (int s, int g, MPI_Comm c, MPI_Status *st), (s, g, c, st))                 \
	X(Iprobe, IPROBE, (int s, int g, MPI_Comm c, int *f, MPI_Status *st), (s, g, c, f, st))    \
	X(Start, START, (MPI_Request * q), (q))                                                    \
	X(Startall, STARTALL, (int n, MPI_Request q[]), (n, q))                                    \
	X(Barrier, BARRIER, (MPI_Comm c), (c))                                                     \
	X(Bcast, BCAST, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c), (b, n, t, r, c))      \
	X(Reduce, REDUCE,                                                                          \
	  (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op o, int r, MPI_Comm c),          \
	  (sb, rb, n, t, o, r, c))                                                                 \
	X(Allreduce, ALLREDUCE,                                                                    \
	  (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),                 \
	  (sb, rb, n, t, o, c))                                                                    \
	X(Gather, GATHER,                                                                          \
	  (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int r,      \
	   MPI_Comm c),                                                                            \
	  (sb, sn, st, rb, rn, rt, r, c))                                                          \
	X(Gatherv, GATHERV,                                                                        \
	  (const void *sb, int sn, MPI_Datatype st, void *rb, const int rn[], const int dp[],      \
	   MPI_Datatype rt, int r, MPI_Comm c),                                                    \
	  (sb, sn, st, rb, rn, dp, rt, r, c))                                                      \
	X(Scatter, SCATTER,                                                                        \
	  (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int r,      \
	   MPI_Comm c),                                                                            \
	  (sb, sn, st, rb, rn, rt, r, c))                                                          \
	X(Scatterv, SCATTERV,                                                                      \
	  (const void *sb, const int sn[], const int dp[], MPI_Datatype st, void *rb, int rn,      \
	   MPI_Datatype rt, int r, MPI_Comm c),                                                    \
	  (sb, sn, dp, st, rb, rn, rt, r, c))                                                      \
	X(Allgather, ALLGATHER,                                                                    \
	  (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,             \
	   MPI_Comm c),                                                                            \
	  (sb, sn, st, rb, rn, rt, c))                                                             \
	X(Allgatherv, ALLGATHERV,                                                                  \
	  (const void *sb, int sn, MPI_Datatype st, void *rb, const int rn[], const int dp[],      \
	   MPI_Datatype rt, MPI_Comm c),                                                           \
	  (sb, sn, st, rb, rn, dp, rt, c))                                                         \
	X(Alltoall, ALLTOALL,                                                                      \
	  (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,             \
	   MPI_Comm c),                                                                            \
	  (sb, sn, st, rb, rn, rt, c))                                                             \
	X(Alltoallv, ALLTOALLV,                                                                    \
	  (const void *sb, const int sn[], const int sd[], MPI_Datatype st, void *rb,              \
	   const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c),                           \
	  (sb, sn, sd, st, rb, rn, rd, rt, c))                                                     \
	X(Reduce_scatter, REDUCE_SCATTER,                                                          \
	  (const void *sb, void *rb, const int rn[], MPI_Datatype t, MPI_Op o, MPI_Comm c),        \
	  (sb, rb, rn, t, o, c))                                                                   \
	X(Reduce_scatter_block, REDUCE_SCATTER_BLOCK,                                              \
	  (const void *sb, void *rb, int rn, MPI_Datatype t, MPI_Op o, MPI_Comm c),                \
	  (sb, rb, rn, t, o, c))                                                                   \
	X(Scan, SCAN, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),     \
	  (sb, rb, n, t, o, c))                                                                    \
	X(Exscan, EXSCAN, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), \
	  (sb, rb, n, t, o, c))                                                                    \
	X(Ibarrier, IBARRIER, (MPI_Comm c, MPI_Request * q), (c, q))                               \
	X(Ibcast, IBCAST, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c, MPI_Request *q),     \
	  (b, n, t, r, c, q))                                                                      \
	X(Ireduce, IREDUCE,                                                                        \
	  (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op o, int r, MPI_Comm c,           \
	   MPI_Request *q),                                                                        \
	  (sb, rb, n, t, o, r, c, q))                                                              \
	X(Iallreduce, IALLREDUCE,                                                                  \
	  (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request *q), \
	  (sb, rb, n, t, o, c, q))

#define WRAP_C(Name, ID, PARAMS, ARGS)                                                             \
	MPIW_EXPORT int MPI_##Name PARAMS                                                          \
	{                                                                                          \
		int rc = PMPI_##Name ARGS;                                                         \
		MPIW_EVENT(MPIFN_##ID);                                                            \
		return rc;                                                                         \
	}
WRAP_C_LIST(WRAP_C)

MPIW_EXPORT int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;

	if (rc == MPI_SUCCESS) {
		PMPI_Query_thread(&provided);
		mpiw_init(provided);
	}
	return rc;
}

MPIW_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		mpiw_init(*provided);
	return rc;
}

MPIW_EXPORT int MPI_Finalize(void)
{
	if (mpiw_depth == 0)
		mpiw_fini();
	return PMPI_Finalize();
}

MPIW_EXPORT int MPI_Pcontrol(const int level, ...)
{
	int rc = PMPI_Pcontrol(level);

	if (mpiw_likely(mpiw_on) && mpiw_depth == 0)
		mpiw_pcontrol(level, __builtin_return_address(0));
	return rc;
}
