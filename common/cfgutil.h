/*
 * Checked access to libconfig settings. Every getter names the key in its error message
 * ("utilization_cap: must be in (0, 1]") so a daemon can refuse a bad config with one line.
 * A missing optional key leaves *out at the default the caller stored there beforehand.
 * All return 0 on success, -1 on error with the reason in why (NUL-terminated).
 */
#ifndef VSCHED_CFGUTIL_H
#define VSCHED_CFGUTIL_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/*
 * Key tables: one table per program (vsched, agent, controller) lists every key of its
 * configuration file with its type, default, range and a one-line description, and drives
 * the defaults, the parse (unknown keys refused, every value checked, the key named in the
 * reason), the normalised print of -n and the key list of --config-keys (the source of the
 * configuration's man page). Defaults are written as in the file and go through the same
 * parse, so a default is always a value the parse accepts.
 */
enum cfg_type {
	CFG_STRING,   /* char[size]; check: an extra test of the value */
	CFG_DURATION, /* uint64_t ns, written as a string with a unit ("10ms"); range in ns */
	CFG_NUMBER,   /* double */
	CFG_INT,      /* int */
	CFG_COUNT,    /* uint64_t, written as a number (int or float), e.g. bytes/s */
	CFG_BOOL,     /* bool */
	CFG_ENUM,     /* uint8_t or int (by size): the index of its name in choices */
	CFG_MODE,     /* unsigned: a file mode written as an octal string ("0600") */
	CFG_CUSTOM,   /* parsed and printed by the key's own functions */
};

struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t off, size;           /* the field in the configuration struct: CFG_FIELD() */
	const char *dflt;           /* the default as written in the file ("\"1s\"", "0.9");
	                             * NULL: set by set_default */
	double lo, hi;              /* CFG_DURATION, CFG_NUMBER, CFG_INT, CFG_COUNT: range */
	const char *const *choices; /* CFG_ENUM: names by value, NULL-terminated */
	const char *doc;            /* one line: what the key sets */
	const char *dflt_doc;       /* the default in words, when set_default computes it */
	const char *range_doc;      /* the range in words, where the type's own is not enough */
	void (*set_default)(void *cfg);
	/* CFG_STRING: refuses a value (0, or -1 with the reason; the key is put before it) */
	int (*check)(const char *value, char *why, size_t whylen);
	/* CFG_CUSTOM */
	int (*parse)(const config_setting_t *s, void *cfg, char *why, size_t whylen);
	void (*print)(FILE *f, const void *cfg);
};
#define CFG_FIELD(type, member) offsetof(type, member), sizeof(((type *)0)->member)

/* Every key's default into cfg (zeroed by the caller). A default the parse refuses is a
 * bug: fatal. */
void cfg_defaults(const struct cfg_key *keys, void *cfg);
/* The keys set in a loaded file, over what cfg holds. 0 or -1 with why. */
int cfg_parse(const struct cfg_key *keys, const config_t *lc, void *cfg, char *why, size_t whylen);
/* cfg_load + cfg_parse of path over cfg. 0 or -1 with why ("FILE:LINE: ..." or "key: ..."). */
int cfg_load_file(const struct cfg_key *keys, const char *path, void *cfg, char *why,
                  size_t whylen);
/* Every key, normalised, in table order, in libconfig syntax (-n); the parse reads it
 * back unchanged. */
void cfg_print(const struct cfg_key *keys, const void *cfg, FILE *f);
/*
 * One line per key: NAME, TYPE, DEFAULT (as written in the file, or in words between
 * parentheses), RANGE and DESCRIPTION, separated by tabs (--config-keys). TYPE is one of
 * string, duration, number, integer, count, boolean, enum, mode, list.
 */
void cfg_print_keys(const struct cfg_key *keys, FILE *f);
/* A ZeroMQ endpoint with a non-empty address: tcp://ADDRESS or, unless tcp_only, ipc://PATH. */
bool cfg_endpoint_ok(const char *endpoint, bool tcp_only);
/* A cfg_key check: value is a tcp:// or ipc:// endpoint (cfg_endpoint_ok), else -1 with
 * "\"VALUE\" must be a tcp:// or ipc:// endpoint". */
int cfg_check_endpoint(const char *value, char *why, size_t whylen);

/* A number in the shortest form that reads back as exactly v, without an exponent when a
 * plain form reads back too (100.0, not 1e+02), always with a point or an exponent (so
 * that libconfig reads a float). */
void cfg_format_double(double v, char *buf, size_t len);

#endif
