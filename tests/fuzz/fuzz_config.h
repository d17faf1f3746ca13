/*
 * The config harnesses' shared body: a config file of a daemon, given as the input, is
 * loaded over the defaults as the daemon loads it. An accepted file prints (-n) to a file
 * that loads back and prints the same (the contract of cfg_print: the parse reads it back
 * unchanged).
 */
#ifndef VSCHED_FUZZ_CONFIG_H
#define VSCHED_FUZZ_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fuzz_config {
	size_t size; /* of the daemon's configuration struct */
	void (*defaults)(void *cfg);
	int (*load)(const char *path, void *cfg, char *why, size_t whylen);
	void (*print)(FILE *f, const void *cfg);
};

/* The three daemons' configs: vsched.conf, agent.conf, controller.conf. */
extern const struct fuzz_config fuzz_config_vsched, fuzz_config_agent, fuzz_config_controller;

void fuzz_config_one(const struct fuzz_config *fc, const uint8_t *data, size_t size);

#endif
