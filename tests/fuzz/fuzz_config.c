/* See fuzz_config.h. */
#include "fuzz_config.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

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
