/* vsched.conf (vsched/config.c: config_load); the checks are fuzz_config.c's. */
#include "fuzz.h"
#include "fuzz_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_config_one(&fuzz_config_vsched, data, size);
	return 0;
}
