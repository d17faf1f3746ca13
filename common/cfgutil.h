/*
 * Checked access to libconfig settings. Every getter names the key in its error message
 * ("utilization_cap: must be in (0, 1]") so a daemon can refuse a bad config with one line.
 * A missing optional key leaves *out at the default the caller stored there beforehand.
 * All return 0 on success, -1 on error with the reason in why (NUL-terminated).
 */
#ifndef VSCHED_CFGUTIL_H
#define VSCHED_CFGUTIL_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

/* Loads a file; on a parse error why holds "FILE:LINE: message". */
int cfg_load(config_t *cfg, const char *path, char *why, size_t whylen);

/* A duration written as a string with a unit ("10ms"), within [min, max]. */
int cfg_get_duration(const config_t *cfg, const char *key, uint64_t min, uint64_t max,
                     uint64_t *out, char *why, size_t whylen);
/* A number (int or float) within [min, max]. */
int cfg_get_double(const config_t *cfg, const char *key, double min, double max, double *out,
                   char *why, size_t whylen);
/* An integer within [min, max]. */
int cfg_get_int(const config_t *cfg, const char *key, long long min, long long max, long long *out,
                char *why, size_t whylen);
/* A string of at most cap-1 bytes, copied into out. */
int cfg_get_string(const config_t *cfg, const char *key, char *out, size_t cap, char *why,
                   size_t whylen);
/*
 * A string that must be one of choices (NULL-terminated list); *index is set to its
 * position.
 */
int cfg_get_enum(const config_t *cfg, const char *key, const char *const *choices, int *index,
                 char *why, size_t whylen);
/*
 * Refuses any key at the top level that is not in known (NULL-terminated), so typos in a
 * config are caught ("utilisation_cap: unknown setting").
 */
int cfg_check_keys(const config_t *cfg, const char *const *known, char *why, size_t whylen);

#endif
