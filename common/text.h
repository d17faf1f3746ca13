/*
 * Small text helpers every program shares: the one-line "why" formatter, the name check of
 * the protocols (job and node names), and the scrub that keeps text from outside printable
 * before it is logged or passed on.
 */
#ifndef VSCHED_TEXT_H
#define VSCHED_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define TEXT_NAME_MAX 63 /* job and node names, bytes (PCTL_NAME_MAX = PADM_NAME_MAX) */

/*
 * snprintf into buf that may cut the text (one line of bounded length: cutting is fine).
 * buf NULL or len 0: nothing is written. Always NUL-terminated otherwise.
 */
void text_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void text_vfmt(char *buf, size_t len, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* A name as the protocols accept it: 1..TEXT_NAME_MAX printable non-blank ASCII bytes. */
bool text_name_ok(const char *s);
/* Replaces every byte outside printable ASCII (0x20..0x7e) by '?', in place. */
void text_scrub(char *s);

#endif
