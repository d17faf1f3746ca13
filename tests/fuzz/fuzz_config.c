/* See fuzz_config.h. */
#include "fuzz_config.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "controller.h"
#include "vsched.h"

static void vsched_defaults(void *cfg)
{
	config_defaults(cfg);
}

static int vsched_load(const char *path, void *cfg, char *why, size_t whylen)
{
	return config_load(path, cfg, why, whylen);
}

static void vsched_print(FILE *f, const void *cfg)
{
	config_print(f, cfg);
}

static void agent_defaults(void *cfg)
{
	agent_config_defaults(cfg);
}

static int agent_load(const char *path, void *cfg, char *why, size_t whylen)
{
	return agent_config_load(path, cfg, why, whylen);
}

static void agent_print(FILE *f, const void *cfg)
{
	agent_config_print(f, cfg);
}

static void ctld_defaults(void *cfg)
{
	ctld_config_defaults(cfg);
}

static int ctld_load(const char *path, void *cfg, char *why, size_t whylen)
{
	return ctld_config_load(path, cfg, why, whylen);
}

static void ctld_print(FILE *f, const void *cfg)
{
	ctld_config_print(f, cfg);
}

const struct fuzz_config fuzz_config_vsched = {sizeof(struct vsched_config), vsched_defaults,
                                               vsched_load, vsched_print};
const struct fuzz_config fuzz_config_agent = {sizeof(struct agent_config), agent_defaults,
                                              agent_load, agent_print};
const struct fuzz_config fuzz_config_controller = {sizeof(struct ctld_config), ctld_defaults,
                                                   ctld_load, ctld_print};

/* cfg printed (-n) into a malloc'ed string. */
static char *printed(const struct fuzz_config *fc, const void *cfg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	FUZZ_CHECK(f != NULL);
	fc->print(f, cfg);
	FUZZ_CHECK(fclose(f) == 0);
	return buf;
}

void fuzz_config_one(const struct fuzz_config *fc, const uint8_t *data, size_t size)
{
	void *cfg = calloc(1, fc->size);
	char why[512], *text, *again;
	size_t len, len2;

	FUZZ_CHECK(cfg != NULL);
	fc->defaults(cfg);
	why[0] = '\0';
	if (fc->load(fuzz_file(data, size), cfg, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		free(cfg);
		return;
	}
	fuzz_accepted();
	text = printed(fc, cfg, &len);
	fc->defaults(cfg);
	if (fc->load(fuzz_file(text, len), cfg, why, sizeof(why)) != 0) {
		fprintf(stderr, "the printed config does not load: %s\n%s", why, text);
		FUZZ_CHECK(!"printed config loads");
	}
	again = printed(fc, cfg, &len2);
	FUZZ_CHECK(len2 == len && memcmp(text, again, len) == 0);
	free(again);
	free(text);
	free(cfg);
}
