/* Helpers of the fuzz harnesses: see fuzz.h. */
#include "fuzz.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static bool accepted;

void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, what);
	abort();
}

void fuzz_accepted(void)
{
	accepted = true;
}

bool fuzz_was_accepted(void)
{
	return accepted;
}

void fuzz_accepted_reset(void)
{
	accepted = false;
}

const char *fuzz_file(const void *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			fuzz_fail(__FILE__, __LINE__, "memfd_create");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size))
		fuzz_fail(__FILE__, __LINE__, "writing the memfd");
	return path;
}

const char *fuzz_string(const uint8_t *data, size_t size)
{
	static char *s;

	free(s);
	s = malloc(size + 1);
	if (s == NULL)
		fuzz_fail(__FILE__, __LINE__, "out of memory");
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
