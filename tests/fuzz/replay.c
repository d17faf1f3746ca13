/*
 * Runs inputs through one harness once, without libFuzzer (any compiler; the ASan build
 * makes it a regression test of the corpus). Usage: fuzz_replay_HARNESS PATH... where a
 * PATH is a file or a directory of files. An input whose name starts with "valid-" must be
 * accepted by the harness's decoder. Exits 1 on such a failure or when no input was found;
 * a crash or a failed invariant aborts.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int inputs, accepted, failures;

static void run_file(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long len;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0 || (data = malloc((size_t)len + 1)) == NULL ||
	    fread(data, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		failures++;
	} else {
		fuzz_accepted_reset();
		LLVMFuzzerTestOneInput(data, (size_t)len);
		inputs++;
		accepted += fuzz_was_accepted();
		if (strncmp(base, "valid-", 6) == 0 && !fuzz_was_accepted()) {
			fprintf(stderr, "replay: %s: a valid seed was refused\n", path);
			failures++;
		}
	}
	free(data);
	if (f != NULL)
		fclose(f);
}

static void run_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	char sub[4096];
	int n;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: no %s\n", path);
		failures++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
			run_path(sub);
		}
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run_path(argv[i]);
	printf("%d inputs, %d accepted, %d failures\n", inputs, accepted, failures);
	return failures > 0 || inputs == 0 ? 1 : 0;
}
