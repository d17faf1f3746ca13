/*
 * Durations as written in the configs and the state file (duration_parse), and their
 * formatter. An accepted string formats to a string that parses back to the same value;
 * the first 8 bytes as a number format to a string that parses back to that number.
 */
#include "fuzz.h"

#include <string.h>

#include "duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char b[64];
	uint64_t ns = 0, again = 0;

	if (size >= sizeof(ns)) {
		memcpy(&ns, data, sizeof(ns));
		FUZZ_CHECK(duration_parse(duration_format(ns, b, sizeof(b)), &again) == 0);
		FUZZ_CHECK(again == ns);
	}
	if (duration_parse(fuzz_string(data, size), &ns) != 0)
		return 0;
	fuzz_accepted();
	FUZZ_CHECK(duration_parse(duration_format(ns, b, sizeof(b)), &again) == 0);
	FUZZ_CHECK(again == ns);
	return 0;
}
