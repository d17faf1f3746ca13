/* Small text helpers (text.h). */
#include "text.h"

#include <stdio.h>
#include <string.h>

void text_vfmt(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (buf == NULL || len == 0)
		return;
	vsnprintf(buf, len, fmt, ap);
}

void text_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text_vfmt(buf, len, fmt, ap);
	va_end(ap);
}

bool text_name_ok(const char *s)
{
	size_t n = s ? strnlen(s, TEXT_NAME_MAX + 1) : 0;

	if (n == 0 || n > TEXT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

void text_scrub(char *s)
{
	for (; *s != '\0'; s++)
		if (*s < ' ' || *s > '~')
			*s = '?';
}
