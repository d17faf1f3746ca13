/*
 * Command-line argument checking for vschedctl. Every value from the command line is checked
 * for form and range here; a bad one ends the program with one line on stderr naming the
 * command, the argument and the reason, and exit status 2. Semantic checks that need the
 * daemon's configuration (slice <= deadline, min_period, CPU managed, admission) are left
 * to vsched, which answers with its own reason.
 */
#include "vschedctl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

void args_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vschedctl: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(CLI_EXIT_USAGE);
}

static bool is_negative_number(const char *s)
{
	return s[0] == '-' && s[1] >= '0' && s[1] <= '9';
}

struct cli_opt *args_opt(struct cli_opt *opts, const char *name)
{
	for (; opts->name != NULL; opts++)
		if (strcmp(opts->name, name) == 0)
			return opts;
	return NULL;
}

int args_parse(const char *cmd, int argc, char **argv, struct cli_opt *opts, const char **pos,
               int maxpos, bool stop_at_command, char ***rest, int *nrest)
{
	int i, npos = 0;

	if (rest != NULL) {
		*rest = NULL;
		*nrest = 0;
	}
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		struct cli_opt *o;
		const char *eq;
		char name[64];
		size_t nlen;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0' || is_negative_number(a)) {
			if (stop_at_command)
				break;
			if (npos >= maxpos)
				args_fail(cmd, "unexpected argument '%s'", a);
			pos[npos++] = a;
			continue;
		}
		if (a[1] != '-')
			args_fail(cmd, "unknown option '%s'", a);
		eq = strchr(a + 2, '=');
		nlen = eq != NULL ? (size_t)(eq - (a + 2)) : strlen(a + 2);
		if (nlen == 0 || nlen >= sizeof(name))
			args_fail(cmd, "unknown option '%s'", a);
		memcpy(name, a + 2, nlen);
		name[nlen] = '\0';
		o = args_opt(opts, name);
		if (o == NULL)
			args_fail(cmd, "unknown option '--%s'", name);
		if (o->value != NULL)
			args_fail(cmd, "option --%s given twice", name);
		if (!o->has_arg) {
			if (eq != NULL)
				args_fail(cmd, "option --%s takes no value", name);
			o->value = "";
			continue;
		}
		if (eq != NULL) {
			o->value = eq + 1;
		} else {
			if (i + 1 >= argc)
				args_fail(cmd, "option --%s needs a value", name);
			o->value = argv[++i];
		}
		if (o->value[0] == '\0')
			args_fail(cmd, "option --%s needs a value", name);
	}
	/* after "--" (or at the command of `run`) */
	if (stop_at_command) {
		*rest = argv + i;
		*nrest = argc - i;
		return npos;
	}
	for (; i < argc; i++) {
		if (npos >= maxpos)
			args_fail(cmd, "unexpected argument '%s'", argv[i]);
		pos[npos++] = argv[i];
	}
	return npos;
}

/* A decimal integer made of digits only, no sign or blank. Returns 0, -EINVAL or -ERANGE. */
static int parse_digits(const char *s, long long max, long long *out)
{
	long long v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (max - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 0;
}

int32_t args_pid(const char *cmd, const char *s)
{
	long long v = 0;
	int rc = parse_digits(s, INT32_MAX, &v);

	if (rc == -ERANGE)
		args_fail(cmd, "PID '%s': too large", s);
	if (rc != 0 || v <= 0)
		args_fail(cmd, "PID '%s': must be a positive integer", s);
	return (int32_t)v;
}

int32_t args_cpu(const char *cmd, const char *s)
{
	long long v = 0;
	int rc = parse_digits(s, INT32_MAX, &v);

	if (rc == -ERANGE)
		args_fail(cmd, "--cpu '%s': too large", s);
	if (rc != 0)
		args_fail(cmd, "--cpu '%s': must be a non-negative integer", s);
	return (int32_t)v;
}

uint64_t args_duration(const char *cmd, const char *opt, const char *s, bool allow_zero)
{
	uint64_t ns = 0;
	int rc = duration_parse(s, &ns);
	size_t digits = strspn(s, "0123456789.");

	if (rc == -ERANGE)
		args_fail(cmd, "--%s '%s': too large for 64-bit nanoseconds", opt, s);
	if (rc != 0) {
		if (s[0] == '-')
			args_fail(cmd, "--%s '%s': must not be negative", opt, s);
		if (digits > 0 && s[digits] == '\0')
			args_fail(cmd,
			          "--%s '%s': missing unit (one of ns us ms s m h d, e.g. 10ms)",
			          opt, s);
		if (digits > 0 && s[digits] >= 'a' && s[digits] <= 'z')
			args_fail(cmd, "--%s '%s': unknown unit '%s' (one of ns us ms s m h d)",
			          opt, s, s + digits);
		args_fail(cmd, "--%s '%s': not a duration (e.g. 10ms, 1.5s, 250us)", opt, s);
	}
	if (ns == 0 && !allow_zero)
		args_fail(cmd, "--%s '%s': must be greater than 0", opt, s);
	return ns;
}

uint8_t args_park(const char *cmd, const char *s)
{
	if (strcmp(s, "stop") == 0)
		return VSP_PARK_STOP;
	if (strcmp(s, "idle") == 0)
		return VSP_PARK_IDLE;
	args_fail(cmd, "--park '%s': must be 'stop' or 'idle'", s);
}

uint8_t args_anchor(const char *cmd, const char *s)
{
	if (strcmp(s, "epoch") == 0)
		return VSP_ANCHOR_EPOCH;
	if (strcmp(s, "wakeup") == 0)
		return VSP_ANCHOR_WAKEUP;
	args_fail(cmd, "--anchor '%s': must be 'epoch' or 'wakeup'", s);
}

void args_resv(const char *cmd, struct cli_opt *opts, struct vsp_resv *r)
{
	const struct cli_opt *o;

	*r = (struct vsp_resv){0};
	o = args_opt(opts, "period");
	if (o->value == NULL)
		args_fail(cmd, "--period is required");
	/* zero period and slice are the daemon's to refuse: its reason names the rule */
	r->period = args_duration(cmd, "period", o->value, true);
	o = args_opt(opts, "slice");
	if (o->value == NULL)
		args_fail(cmd, "--slice is required");
	r->slice = args_duration(cmd, "slice", o->value, true);
	o = args_opt(opts, "deadline");
	/* on the wire deadline 0 means "= period"; an explicit 0 would be silently that */
	if (o != NULL && o->value != NULL)
		r->deadline = args_duration(cmd, "deadline", o->value, false);
	o = args_opt(opts, "phase");
	if (o != NULL && o->value != NULL)
		r->phase = args_duration(cmd, "phase", o->value, true);
}

/* Parses "PHASE+LEN[/SLICE]" into w (period left 0). */
static void parse_window(const char *cmd, const char *s, struct vsp_resv *w)
{
	char buf[96], *plus, *slash;

	if (strlen(s) >= sizeof(buf))
		args_fail(cmd, "--window '%s': too long", s);
	strcpy(buf, s);
	plus = strchr(buf, '+');
	if (plus == NULL)
		args_fail(cmd, "--window '%s': expected PHASE+LENGTH[/SLICE], e.g. 50ms+20ms", s);
	*plus++ = '\0';
	slash = strchr(plus, '/');
	if (slash != NULL)
		*slash++ = '\0';
	*w = (struct vsp_resv){0};
	/* a bare 0 is the frame start: "0+30ms" reads better than "0ns+30ms" */
	w->phase = strcmp(buf, "0") == 0 ? 0 : args_duration(cmd, "window", buf, true);
	w->deadline = args_duration(cmd, "window", plus, false);
	w->slice = slash != NULL ? args_duration(cmd, "window", slash, false) : w->deadline;
}

int args_take_windows(const char *cmd, int *argc, char **argv, struct vsp_resv *w)
{
	int n = 0, k = 0, i;

	for (i = 0; i < *argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--window") == 0) {
			if (i + 1 >= *argc || argv[i + 1][0] == '\0')
				args_fail(cmd, "option --window needs a value");
			v = argv[++i];
		} else if (strncmp(a, "--window=", 9) == 0) {
			v = a + 9;
			if (*v == '\0')
				args_fail(cmd, "option --window needs a value");
		} else {
			argv[k++] = argv[i];
			continue;
		}
		if (n >= VSP_MAX_WINDOWS)
			args_fail(cmd, "more than %d --window options", VSP_MAX_WINDOWS);
		parse_window(cmd, v, &w[n++]);
	}
	for (; i < *argc; i++)
		argv[k++] = argv[i];
	*argc = k;
	return n;
}

static int by_phase(const void *a, const void *b)
{
	const struct vsp_resv *x = a, *y = b;

	return (x->phase > y->phase) - (x->phase < y->phase);
}

void args_reservation(const char *cmd, struct cli_opt *opts, struct vsp_resv *w, int nwin,
                      struct vsp_request *req)
{
	static const char *single[] = {"slice", "deadline", "phase"};
	const struct cli_opt *o;
	uint64_t period;

	if (nwin == 0) {
		args_resv(cmd, opts, &req->resv);
		req->nwin = 0;
		return;
	}
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		o = args_opt(opts, single[i]);
		if (o != NULL && o->value != NULL)
			args_fail(cmd,
			          "--%s cannot be combined with --window (give PHASE+LENGTH/SLICE)",
			          single[i]);
	}
	o = args_opt(opts, "period");
	if (o->value == NULL)
		args_fail(cmd, "--period is required");
	period = args_duration(cmd, "period", o->value, true);
	/* vsched wants them in phase order; overlaps are its to refuse, with the reason */
	qsort(w, (size_t)nwin, sizeof(*w), by_phase);
	req->nwin = (uint8_t)nwin;
	for (int i = 0; i < nwin; i++) {
		req->win[i] = w[i];
		req->win[i].period = period;
	}
	req->resv = req->win[0];
}
