/* controller.conf (controller/config.c: ctld_config_load); the checks are fuzz_config.c's. */
#include "fuzz.h"
#include "fuzz_config.h"

#include "controller.h"

static void defaults(void *cfg)
{
	ctld_config_defaults(cfg);
}

static int load(const char *path, void *cfg, char *why, size_t whylen)
{
	return ctld_config_load(path, cfg, why, whylen);
}

static void print(FILE *f, const void *cfg)
{
	ctld_config_print(f, cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_config fc = {sizeof(struct ctld_config), defaults, load, print};

	fuzz_config_one(&fc, data, size);
	return 0;
}
