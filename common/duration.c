/*
 * Durations with a mandatory unit (see duration.h).
 *
 * Grammar: DIGITS [ "." DIGITS ] UNIT, UNIT one of ns us ms s m h d, nothing else — no sign,
 * no blank, no exponent, no leading or trailing ".". The value is computed in integers:
 * integer part * unit + round(fraction * unit), so "1.5ms" is exactly 1500000 ns and no
 * floating-point rounding is involved. Fractions are rounded to the nearest nanosecond,
 * halves away from zero ("0.5ns" = 1 ns).
 */
#include "duration.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct unit {
	const char *name;
	uint64_t ns;
};

/* Largest first: duration_format picks the first that represents the value well. */
static const struct unit units[] = {
    {"d", 86400ULL * 1000000000ULL},
    {"h", 3600ULL * 1000000000ULL},
    {"m", 60ULL * 1000000000ULL},
    {"s", 1000000000ULL},
    {"ms", 1000000ULL},
    {"us", 1000ULL},
    {"ns", 1ULL},
};
#define NUNITS (sizeof(units) / sizeof(units[0]))

/* At most this many fraction digits take part in the value (10^19 < 2^64). */
#define FRAC_DIGITS_MAX 19

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The unit spelled exactly by s (whole remaining string), or NULL. */
static const struct unit *unit_lookup(const char *s)
{
	for (size_t i = 0; i < NUNITS; i++)
		if (strcmp(s, units[i].name) == 0)
			return &units[i];
	return NULL;
}

/*
 * Parses the integer part at *p into *v, advancing *p. Returns 0, -EINVAL (no digit) or
 * -ERANGE (more than 64 bits).
 */
static int parse_int_part(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t acc = 0;
	bool overflow = false;

	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (acc > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			acc = acc * 10 + d;
	}
	*p = s;
	*v = acc;
	return overflow ? -ERANGE : 0;
}

/*
 * Parses the fraction digits at *p (after the '.') as num / den, den = 10^k, k <= 19.
 * Digits past the 19th are checked but ignored. Returns 0 or -EINVAL (no digit).
 */
static int parse_frac_part(const char **p, uint64_t *num, uint64_t *den)
{
	const char *s = *p;
	int k = 0;

	if (!is_digit(*s))
		return -EINVAL;
	*num = 0;
	*den = 1;
	for (; is_digit(*s); s++, k++) {
		if (k >= FRAC_DIGITS_MAX)
			continue;
		*num = *num * 10 + (uint64_t)(*s - '0');
		*den *= 10;
	}
	*p = s;
	return 0;
}

int duration_parse(const char *s, uint64_t *ns)
{
	const struct unit *u;
	uint64_t ip = 0, num = 0, den = 1, total, frac_ns;
	const char *p = s;
	int rc;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	rc = parse_int_part(&p, &ip);
	if (rc == -EINVAL)
		return rc;
	if (*p == '.') {
		p++;
		if (parse_frac_part(&p, &num, &den) < 0)
			return -EINVAL;
	}
	u = unit_lookup(p);
	if (u == NULL)
		return -EINVAL; /* missing or unknown unit, or trailing characters */
	if (rc == -ERANGE)
		return -ERANGE;

	/* frac_ns = round(num * unit / den); num < den <= 10^19, unit < 2^47: fits 128 bits. */
	__extension__ typedef unsigned __int128 u128;
	frac_ns = (uint64_t)(((u128)num * u->ns + den / 2) / den);
	if (ip > UINT64_MAX / u->ns)
		return -ERANGE;
	total = ip * u->ns;
	if (total > UINT64_MAX - frac_ns)
		return -ERANGE;
	*ns = total + frac_ns;
	return 0;
}

/* True when ns is a whole multiple of a thousandth of the unit, i.e. <= 3 decimals. */
static bool fits_3_decimals(uint64_t ns, const struct unit *u)
{
	if (u->ns < 1000)
		return true;
	return ns % (u->ns / 1000) == 0;
}

const char *duration_format(uint64_t ns, char *buf, size_t len)
{
	const struct unit *u = &units[NUNITS - 1];
	uint64_t whole, milli;

	if (buf == NULL || len == 0)
		return buf;
	for (size_t i = 0; i < NUNITS; i++) {
		if (ns >= units[i].ns && fits_3_decimals(ns, &units[i])) {
			u = &units[i];
			break;
		}
	}
	whole = ns / u->ns;
	milli = u->ns >= 1000 ? (ns % u->ns) / (u->ns / 1000) : 0;
	if (milli == 0)
		snprintf(buf, len, "%llu%s", (unsigned long long)whole, u->name);
	else if (milli % 100 == 0)
		snprintf(buf, len, "%llu.%01llu%s", (unsigned long long)whole,
		         (unsigned long long)(milli / 100), u->name);
	else if (milli % 10 == 0)
		snprintf(buf, len, "%llu.%02llu%s", (unsigned long long)whole,
		         (unsigned long long)(milli / 10), u->name);
	else
		snprintf(buf, len, "%llu.%03llu%s", (unsigned long long)whole,
		         (unsigned long long)milli, u->name);
	return buf;
}
