/*
 * libapprate-mpi's private header: the state shared by the wrappers (wrap_c.c, wrap_f.c)
 * and the progress signal (progress.c). See docs/mpi.md.
 *
 * The wrappers call the real function through its PMPI name, then report the event with
 * MPIW_EVENT(fn). A Fortran wrapper raises mpiw_depth around its call, because some MPI
 * implementations (MPICH) implement the Fortran binding on top of the C MPI_ functions:
 * the inner C wrapper then reports nothing, and each application call counts once.
 */
#ifndef MPIW_H
#define MPIW_H

#include <stdbool.h>
#include <stdint.h>

#include "mpi_progress.h"

#define MPIW_EXPORT      __attribute__((visibility("default")))
#define mpiw_likely(x)   __builtin_expect(!!(x), 1)
#define mpiw_unlikely(x) __builtin_expect(!!(x), 0)

extern bool mpiw_on;           /* a progress signal is active (set once at MPI_Init) */
extern __thread int mpiw_depth /* inside a Fortran wrapper */
    __attribute__((tls_model("initial-exec")));

/* progress.c */
/* At MPI_Init/MPI_Init_thread (C or Fortran), once MPI is up; later calls do nothing. */
void mpiw_init(int provided);
/* At MPI_Finalize, before the real one: last analysis, last report, close. */
void mpiw_fini(void);
/* One call of function fn (enum mpifn) from call site site. Hot path. */
void mpiw_event(unsigned fn, const void *site);
/* MPI_Pcontrol(level) from site. */
void mpiw_pcontrol(int level, const void *site);

#define MPIW_EVENT(fn)                                                                             \
	do {                                                                                       \
		if (mpiw_likely(mpiw_on) && mpiw_depth == 0)                                       \
			mpiw_event((fn), __builtin_return_address(0));                             \
	} while (0)

#endif
