/*
 * Which libapprate-mpi to preload for a program: the one built for the MPI library the
 * program links, as the dynamic loader resolves it (ldd), never guessed from names or
 * paths. Shared by `vschedctl job run --mpi` and the Slurm plugin.
 *
 * An interposer directory holds one subdirectory per MPI C library soname, each with the
 * interposer built for it: DIR/libmpi.so.40/libapprate-mpi.so (Open MPI),
 * DIR/libmpich.so.12/libapprate-mpi.so (MPICH). See libapprate-mpi/CMakeLists.txt.
 */
#ifndef MPI_FIND_H
#define MPI_FIND_H

#include <stddef.h>

#define MPI_FIND_LIB "libapprate-mpi.so"

/*
 * Resolves program like execvp (a name without '/' is looked up in $PATH) into path, and
 * lists the sonames its dynamic loader resolves (ldd, transitively). Then looks, in each
 * directory of dirs (':'-separated, in order), for SONAME/libapprate-mpi.so with a SONAME
 * the program links. On success writes the interposer's path into out and returns 0;
 * otherwise returns -1 with a one-line reason in why (not found, not a dynamic executable,
 * no MPI library, no interposer for it). Runs ldd once: forks, tens of milliseconds; ldd
 * may run the program's dynamic loader, never the program itself.
 */
int mpi_find_interposer(const char *program, const char *dirs, char *out, size_t outlen, char *why,
                        size_t whylen);

/*
 * Parses ldd output into the list of sonames ("NAME => PATH (ADDR)" lines; "NAME (ADDR)"
 * lines without a path are skipped): NUL-separated in names (at most len bytes, truncated
 * cleanly). Returns how many were stored. Exposed for the unit test.
 */
int mpi_find_parse_ldd(const char *text, char *names, size_t len);

#endif
