/*
 * Shared by the fuzz harnesses (tests/fuzz/fuzz_*.c). Each harness defines libFuzzer's
 * entry point, LLVMFuzzerTestOneInput, over one decoder or parser of outside bytes; it is
 * linked either with libFuzzer (clang, VSCHED_FUZZ=ON) or with replay.c (any compiler),
 * which runs a corpus through it once as a regression test.
 *
 * A harness checks invariants with FUZZ_CHECK: a failed check aborts, which libFuzzer and
 * the replay driver both report as a finding. It calls fuzz_accepted() when the decoder
 * accepted the input, so that the replay driver can tell that the seeds named "valid-*"
 * are still valid messages (a seed that no longer decodes explores nothing).
 */
#ifndef VSCHED_FUZZ_H
#define VSCHED_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with the harness's file, line and the failed condition when cond is false. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fuzz_fail(__FILE__, __LINE__, #cond);                                      \
	} while (0)
_Noreturn void fuzz_fail(const char *file, int line, const char *what);

/* The current input was accepted by the decoder (see above). */
void fuzz_accepted(void);
/* Whether fuzz_accepted() was called since the last fuzz_accepted_reset(). */
_Bool fuzz_was_accepted(void);
void fuzz_accepted_reset(void);

/*
 * The bytes as a file for a parser that reads a path (the config loaders): a memfd
 * rewritten on each call, named by its /proc/self/fd path. Returns that path; aborts when
 * the memfd cannot be made or written. Not reentrant (one file per process).
 */
const char *fuzz_file(const void *data, size_t size);

/* The bytes as a NUL-terminated string (freed on the next call); NUL bytes inside stay. */
const char *fuzz_string(const uint8_t *data, size_t size);

#endif
