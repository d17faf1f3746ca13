/* controller.conf (controller/config.c: ctld_config_load); the checks are fuzz_config.c's. */
#include "fuzz.h"
#include "fuzz_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_config_one(&fuzz_config_controller, data, size);
	return 0;
}
