/*
 * Durations with a mandatory unit: ns us ms s m h d, e.g. "10ms", "1.5s", "250us", "2d".
 * Decimal fractions are allowed; the result is rounded to the nearest nanosecond and must
 * be an exact integer count of nanoseconds after rounding.
 */
#ifndef VSCHED_DURATION_H
#define VSCHED_DURATION_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses s into *ns. Returns 0, -EINVAL (empty, no unit, unknown unit, sign, garbage,
 * trailing characters) or -ERANGE (does not fit in 64 bits). On error *ns is unchanged.
 */
int duration_parse(const char *s, uint64_t *ns);

/*
 * Formats ns in the largest unit that keeps at most 3 decimals without loss when possible
 * ("10ms", "1.5s", "250us", "0ns"). Always NUL-terminates; returns buf.
 */
const char *duration_format(uint64_t ns, char *buf, size_t len);

#endif
