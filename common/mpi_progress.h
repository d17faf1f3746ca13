/*
 * The progress signal of an unmodified MPI program (libapprate-mpi, VSCHED_PROGRESS): the
 * MPI functions the interposer wraps, and the parser of the mode string, shared by the
 * interposer, `vschedctl job run --progress` and the Slurm plugin so that all three accept
 * and refuse the same strings. See docs/mpi.md.
 *
 *   auto            the iteration is inferred from the sequence of MPI calls (default)
 *   mpi:NAME[:N]    one unit per N calls of MPI function NAME (N default 1)
 *   pcontrol        one unit per MPI_Pcontrol(1) call
 *
 * NAME is a wrapped function, case-insensitive, with or without "MPI_" ("mpi:allreduce",
 * "mpi:MPI_Allreduce"). No MPI header is needed here.
 */
#ifndef MPI_PROGRESS_H
#define MPI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define MPIFN_POLL 0x1 /* polling call: how often it is made depends on timing; auto skips it */

/* X(ID, Name, flags): every wrapped MPI function except MPI_Init*, MPI_Finalize. */
#define MPIFN_LIST(X)                                                                              \
	X(SEND, Send, 0)                                                                           \
	X(SSEND, Ssend, 0)                                                                         \
	X(BSEND, Bsend, 0)                                                                         \
	X(RSEND, Rsend, 0)                                                                         \
	X(RECV, Recv, 0)                                                                           \
	X(ISEND, Isend, 0)                                                                         \
	X(ISSEND, Issend, 0)                                                                       \
	X(IBSEND, Ibsend, 0)                                                                       \
	X(IRSEND, Irsend, 0)                                                                       \
	X(IRECV, Irecv, 0)                                                                         \
	X(SENDRECV, Sendrecv, 0)                                                                   \
	X(SENDRECV_REPLACE, Sendrecv_replace, 0)                                                   \
	X(WAIT, Wait, 0)                                                                           \
	X(WAITALL, Waitall, 0)                                                                     \
	X(WAITANY, Waitany, 0)                                                                     \
	X(WAITSOME, Waitsome, MPIFN_POLL)                                                          \
	X(TEST, Test, MPIFN_POLL)                                                                  \
	X(TESTALL, Testall, MPIFN_POLL)                                                            \
	X(TESTANY, Testany, MPIFN_POLL)                                                            \
	X(TESTSOME, Testsome, MPIFN_POLL)                                                          \
	X(PROBE, Probe, 0)                                                                         \
	X(IPROBE, Iprobe, MPIFN_POLL)                                                              \
	X(START, Start, 0)                                                                         \
	X(STARTALL, Startall, 0)                                                                   \
	X(BARRIER, Barrier, 0)                                                                     \
	X(BCAST, Bcast, 0)                                                                         \
	X(REDUCE, Reduce, 0)                                                                       \
	X(ALLREDUCE, Allreduce, 0)                                                                 \
	X(GATHER, Gather, 0)                                                                       \
	X(GATHERV, Gatherv, 0)                                                                     \
	X(SCATTER, Scatter, 0)                                                                     \
	X(SCATTERV, Scatterv, 0)                                                                   \
	X(ALLGATHER, Allgather, 0)                                                                 \
	X(ALLGATHERV, Allgatherv, 0)                                                               \
	X(ALLTOALL, Alltoall, 0)                                                                   \
	X(ALLTOALLV, Alltoallv, 0)                                                                 \
	X(REDUCE_SCATTER, Reduce_scatter, 0)                                                       \
	X(REDUCE_SCATTER_BLOCK, Reduce_scatter_block, 0)                                           \
	X(SCAN, Scan, 0)                                                                           \
	X(EXSCAN, Exscan, 0)                                                                       \
	X(IBARRIER, Ibarrier, 0)                                                                   \
	X(IBCAST, Ibcast, 0)                                                                       \
	X(IREDUCE, Ireduce, 0)                                                                     \
	X(IALLREDUCE, Iallreduce, 0)                                                               \
	X(PCONTROL, Pcontrol, 0)

enum mpifn {
#define MPIFN_ENUM(id, name, flags) MPIFN_##id,
	MPIFN_LIST(MPIFN_ENUM)
#undef MPIFN_ENUM
	    MPIFN_COUNT
};

struct mpifn_info {
	const char *name; /* "Allreduce" (the C name without "MPI_") */
	unsigned flags;   /* MPIFN_* */
};
extern const struct mpifn_info mpifn_info[MPIFN_COUNT];

enum mpiprog_kind {
	MPIPROG_AUTO = 0,
	MPIPROG_CALL = 1,     /* mpi:NAME[:N] */
	MPIPROG_PCONTROL = 2, /* pcontrol */
};

#define MPIPROG_EVERY_MAX 1000000000u
#define MPIPROG_MAX       80 /* longest mode string accepted */

struct mpiprog {
	int kind;       /* enum mpiprog_kind */
	int fn;         /* MPIPROG_CALL: enum mpifn */
	uint32_t every; /* MPIPROG_CALL: N, 1..MPIPROG_EVERY_MAX */
};

/*
 * Parses a mode string (NULL or "" = auto) into *p. Returns 0, or -1 with a one-line reason
 * in why (p unchanged).
 */
int mpiprog_parse(const char *s, struct mpiprog *p, char *why, size_t whylen);

/* Writes the canonical form of p ("auto", "mpi:Allreduce:2", "pcontrol") into buf. */
void mpiprog_format(const struct mpiprog *p, char *buf, size_t len);

#endif
