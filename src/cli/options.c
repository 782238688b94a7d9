/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * options.c - the option layer of every command.  See options.h.
 *
 * Built on getopt_long (so permutation, "--", --name=value and unique
 * prefixes behave as in every GNU tool); the getopt tables, the checks and
 * the help text are all derived from one struct opt table.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvmscope/limits.h"
#include "kvmscope/source.h"
#include "options.h"

#define MAX_OPTS 96

/* Which options the last parse saw, and with what argument (CLI-only
 * state: one parse per process). */
static const struct opt *seen_table;
static const char *seen_arg[MAX_OPTS];
static bool seen[MAX_OPTS];

int parse_whole(const char *s, long long min, long long max, long long *out)
{
	int64_t v;
	int base = 10;

	if (!s || !*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	if (*s == '+' || (*s == '-' && min >= 0))
		return -1;
	if (ks_parse_i64(s, strlen(s), base, &v) < 0 || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

const char *take_time_window(const char *arg, void *value)
{
	struct time_window *w = value;
	const char *comma = strchr(arg, ','), *slash, *dash;
	size_t len = strlen(arg);
	long long n;

	*w = (struct time_window){ .set = true, .end = -1 };
	if (len && arg[len - 1] == '%' && (dash = strchr(arg, '-'))) {
		w->percent = true;
		if (dash[-1] != '%' || ks_parse_seconds(arg, (size_t)(dash - arg - 1), &w->start) < 0 ||
		    ks_parse_seconds(dash + 1, len - (size_t)(dash + 1 - arg) - 1, &w->end) < 0 ||
		    w->start > w->end || w->end > 100)
			return "takes percentages A%-B% with 0 <= A <= B <= 100";
		return NULL;
	}
	if ((slash = strchr(arg, '/'))) {
		double p;

		w->percent = true;
		if (slash == arg || slash[-1] != '%' ||
		    ks_parse_seconds(arg, (size_t)(slash - arg - 1), &p) < 0 || p <= 0 || p > 100 ||
		    parse_whole(slash + 1, 1, (long long)(100 / p + 0.5), &n) < 0)
			return "takes P%/N: the Nth slice of P% of the input's span";
		w->start = p * (double)(n - 1);
		w->end = p * (double)n > 100 ? 100 : p * (double)n;
		return NULL;
	}
	if (!comma || strchr(comma + 1, ','))
		return "takes START,END in seconds (either may be empty), A%-B% or P%/N";
	if ((comma > arg && ks_parse_seconds(arg, (size_t)(comma - arg), &w->start) < 0) ||
	    (comma[1] && ks_parse_seconds(comma + 1, strlen(comma + 1), &w->end) < 0))
		return "takes START,END in seconds (either may be empty), A%-B% or P%/N";
	if (w->end >= 0 && w->end < w->start)
		return "END is before START";
	return NULL;
}

const char *take_limit(const char *arg, void *limits)
{
	static struct ks_error err; /* the message outlives the call */

	return ks_limits_parse(limits, arg, &err) < 0 ? err.msg : NULL;
}

static uint64_t to_ns(double s)
{
	return s * 1e9 >= 1.8e19 ? UINT64_MAX : (uint64_t)(s * 1e9 + 0.5);
}

bool resolve_time_window(const char *path, const struct time_window *w, uint64_t *start,
			 uint64_t *end)
{
	uint64_t first = UINT64_MAX, last = 0, span;
	struct ks_record recs[64];
	struct ks_source *scan;
	struct ks_error err;
	int n, i;

	if (!w->set)
		return false;
	if (!w->percent) {
		*start = to_ns(w->start);
		*end = w->end < 0 ? UINT64_MAX : to_ns(w->end);
		return true;
	}
	/* the records' times only */
	if (cli_source_open(&scan, path, KS_OPEN_NO_SYMBOLS | KS_OPEN_EVENTS_BY_RECORD, NULL, &err) < 0)
		die("%s", err.msg);
	while ((n = ks_source_next_batch(scan, recs, 64, &err)) > 0)
		for (i = 0; i < n; i++)
			if (recs[i].type == KS_REC_EVENT) {
				first = recs[i].ts < first ? recs[i].ts : first;
				last = recs[i].ts > last ? recs[i].ts : last;
			}
	if (n < 0)
		die("%s", err.msg);
	ks_source_close(scan);
	if (first > last) {
		*start = 1, *end = 0; /* no events: nothing is in any window */
		return true;
	}
	span = last - first;
	*start = first + (uint64_t)((double)span * w->start / 100);
	*end = w->end >= 100 ? last : first + (uint64_t)((double)span * w->end / 100);
	return true;
}

void apply_time_window(struct ks_source *src, const char *path, const struct time_window *w)
{
	uint64_t start, end;

	if (resolve_time_window(path, w, &start, &end))
		ks_source_set_window(src, start, end);
}

int parse_name_set(const char *s, const char *const *names, const unsigned *bits,
		   unsigned *out)
{
	const char *p = s;
	unsigned set = 0;

	for (;;) {
		size_t len = strcspn(p, ",");
		int i;

		for (i = 0; names[i]; i++)
			if (strlen(names[i]) == len && !strncmp(p, names[i], len))
				break;
		if (!len || !names[i])
			return -1;
		set |= bits[i];
		if (!p[len])
			break;
		p += len + 1;
	}
	*out = set;
	return 0;
}

int parse_pid_list(const char *s, int32_t *pids, int max, int *n)
{
	const char *p = s;

	if (!*s)
		return -1;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char buf[24];
		long long v;

		if (len == 0 || len >= sizeof(buf) || *n >= max)
			return -1;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (parse_whole(buf, 1, INT32_MAX, &v) < 0)
			return -1;
		pids[(*n)++] = (int32_t)v;
		p += len + (comma ? 1 : 0);
		if (comma && !*p)
			return -1;
	}
	return 0;
}

static int parse_u64_value(const char *s, uint64_t *out)
{
	if (!s || !*s)
		return -1;
	return ks_parse_u64(s, strlen(s), (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10,
			    out);
}

static const char *opt_label(const struct opt *o, char *buf, size_t size)
{
	if (o->long_name)
		snprintf(buf, size, "--%s", o->long_name);
	else
		snprintf(buf, size, "-%c", o->short_name);
	return buf;
}

static void choice_list(const struct opt *o, char *buf, size_t size)
{
	size_t len = 0;
	int i, n;

	buf[0] = 0;
	for (n = 0; o->choices[n]; n++)
		;
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i == 0 ? "" : i == n - 1 ? " or " : ", ", o->choices[i]);
}

/* Apply ARG to O; usage errors exit 2. */
static void apply(const struct opt_cmd *cmd, const struct opt *o, const char *arg)
{
	char name[64], list[256];
	long long v;
	uint64_t u;
	int i;

	opt_label(o, name, sizeof(name));
	switch (o->type) {
	case OPT_T_FLAG:
		*(bool *)o->value = true;
		break;
	case OPT_T_SET:
		*(int *)o->value = (int)o->set;
		break;
	case OPT_T_STRING:
	case OPT_T_INPUT:
		if (!*arg)
			usage_error(cmd->name, "%s needs a non-empty %s", name, o->argh ? o->argh : "value");
		*(const char **)o->value = arg;
		break;
	case OPT_T_INT:
		if (parse_whole(arg, o->min, o->max, &v) < 0)
			usage_error(cmd->name, "%s takes a whole number from %lld to %lld, not '%s'",
				    name, o->min, o->max, arg);
		*(long long *)o->value = v;
		break;
	case OPT_T_U64:
		if (parse_u64_value(arg, &u) < 0)
			usage_error(cmd->name, "%s takes a number (decimal or 0x hex), not '%s'",
				    name, arg);
		*(uint64_t *)o->value = u;
		break;
	case OPT_T_SIZE:
		if (ks_parse_count(arg, strlen(arg), true, &u) < 0)
			usage_error(cmd->name, "%s takes a size in bytes (K, M or G suffix allowed), not '%s'",
				    name, arg);
		*(uint64_t *)o->value = u;
		break;
	case OPT_T_SECONDS: {
		double d;

		if (ks_parse_double(arg, strlen(arg), &d) < 0 || d * 1000 < (double)o->min ||
		    d * 1000 > (double)o->max)
			usage_error(cmd->name, "%s takes seconds from %g to %g, not '%s'", name,
				    (double)o->min / 1000, (double)o->max / 1000, arg);
		*(double *)o->value = d;
		break;
	}
	case OPT_T_CHOICE:
		for (i = 0; o->choices[i]; i++)
			if (!strcmp(arg, o->choices[i])) {
				*(int *)o->value = i;
				return;
			}
		choice_list(o, list, sizeof(list));
		usage_error(cmd->name, "%s takes %s, not '%s'", name, list, arg);
	case OPT_T_LIST:
		if (*o->count >= o->max)
			usage_error(cmd->name, "%s can be given at most %lld times", name, o->max);
		((const char **)o->value)[(*o->count)++] = arg;
		break;
	case OPT_T_CALLBACK: {
		const char *msg = o->cb(arg, o->value);

		if (msg)
			usage_error(cmd->name, "%s %s", name, msg);
		break;
	}
	case OPT_T_END:
	case OPT_T_GROUP:
	case OPT_T_ALIAS:
		break;
	}
}

static bool repeatable(const struct opt *o)
{
	return o->type == OPT_T_LIST || o->type == OPT_T_FLAG || o->type == OPT_T_CALLBACK;
}

/* A repeated option with another value, or two options of one exclusive
 * group, is a mistake the user should hear about, not a silent "last one
 * wins". */
static void check_conflicts(const struct opt_cmd *cmd, const struct opt *opts, int k,
			    const char *arg)
{
	const struct opt *o = &opts[k];
	char a[64], b[64];
	int j;

	opt_label(o, a, sizeof(a));
	if (seen[k] && o->type == OPT_T_INPUT)
		usage_error(cmd->name, "%s takes one input file ('%s' and '%s' were given)%s%s", a,
			    seen_arg[k], arg, o->second ? "; " : "", o->second ? o->second : "");
	if (seen[k] && !repeatable(o) && (!seen_arg[k] != !arg ||
					  (arg && strcmp(seen_arg[k], arg))))
		usage_error(cmd->name, "%s was given twice ('%s' and '%s')", a,
			    seen_arg[k] ? seen_arg[k] : "", arg ? arg : "");
	if (!o->excl)
		return;
	for (j = 0; opts[j].type != OPT_T_END; j++) {
		if (j == k || !seen[j] || !opts[j].excl || strcmp(opts[j].excl, o->excl))
			continue;
		if (o->type == OPT_T_SET && opts[j].type == OPT_T_SET && o->set == opts[j].set)
			continue; /* the same choice spelled two ways */
		usage_error(cmd->name, "%s and %s cannot be used together",
			    opt_label(&opts[j], b, sizeof(b)), a);
	}
}

static bool takes_arg(const struct opt *o)
{
	return o->type != OPT_T_FLAG && o->type != OPT_T_SET;
}

/* The index of the option an alias stands for (K itself otherwise). */
static int resolve_alias(const struct opt_cmd *cmd, const struct opt *opts, int k)
{
	int j;

	if (opts[k].type != OPT_T_ALIAS)
		return k;
	for (j = 0; opts[j].type != OPT_T_END; j++)
		if (opts[j].type != OPT_T_ALIAS && opts[j].long_name &&
		    !strcmp(opts[j].long_name, opts[k].help))
			return j;
	usage_error(cmd->name, "internal: alias of unknown option --%s", opts[k].help);
}

int parse_options(const struct opt_cmd *cmd, const struct opt *opts, int argc, char **argv)
{
	struct option longopts[MAX_OPTS + 2];
	char shorts[3 * MAX_OPTS + 4];
	size_t ns = 0;
	int n = 0, nl = 0, c, idx;

	if (cmd->stop_at_operand)
		shorts[ns++] = '+';
	shorts[ns++] = ':'; /* a missing argument returns ':' */
	for (n = 0; opts[n].type != OPT_T_END; n++) {
		const struct opt *o = &opts[n];

		if (n >= MAX_OPTS)
			usage_error(cmd->name, "internal: too many options");
		if (o->type == OPT_T_GROUP)
			continue;
		o = &opts[resolve_alias(cmd, opts, n)];
		if (opts[n].long_name)
			longopts[nl++] = (struct option){
				opts[n].long_name,
				!takes_arg(o) ? no_argument :
				o->optional_arg ? optional_argument : required_argument,
				NULL, 0x1000 + (int)(o - opts) };
		if (opts[n].short_name) {
			shorts[ns++] = (char)opts[n].short_name;
			if (takes_arg(o))
				shorts[ns++] = ':';
			if (takes_arg(o) && o->optional_arg)
				shorts[ns++] = ':';
		}
	}
	longopts[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nl] = (struct option){ 0 };
	shorts[ns++] = 'h';
	shorts[ns] = 0;
	memset(seen, 0, sizeof(seen));
	memset(seen_arg, 0, sizeof(seen_arg));
	seen_table = opts;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, longopts, &idx)) != -1) {
		int k = -1, j;

		if (c == 'h') {
			options_help(cmd, opts, stdout);
			if (fflush(stdout) != 0 || ferror(stdout))
				die("standard output: write error");
			exit(0);
		}
		if (c == '?' || c == ':') {
			const char *what = c == ':' ? "needs a value" : "is not an option of this command";

			if (optopt && optopt < 0x1000)
				usage_error(cmd->name, "-%c %s", optopt, what);
			if (optopt >= 0x1000)
				usage_error(cmd->name, "--%s %s", opts[optopt - 0x1000].long_name, what);
			usage_error(cmd->name, "'%s' %s", argv[optind - 1], what);
		}
		if (c >= 0x1000)
			k = c - 0x1000;
		for (j = 0; k < 0 && opts[j].type != OPT_T_END; j++)
			if (opts[j].short_name == c)
				k = resolve_alias(cmd, opts, j);
		if (k < 0)
			usage_error(cmd->name, "internal: option %d not in the table", c);
		check_conflicts(cmd, opts, k, optarg);
		apply(cmd, &opts[k], optarg);
		seen[k] = true;
		seen_arg[k] = optarg;
	}
	return optind;
}

bool option_given(const struct opt *opts, const char *long_name)
{
	int k;

	if (opts != seen_table)
		return false;
	for (k = 0; opts[k].type != OPT_T_END && k < MAX_OPTS; k++)
		if (opts[k].long_name && !strcmp(opts[k].long_name, long_name))
			return seen[k];
	return false;
}

/* "  -i, --input FILE" padded to the help column, then the help's lines. */
#define HELP_COL 26

static void print_opt(const struct opt *o, FILE *out)
{
	char head[96];
	const char *h = o->help ? o->help : "";
	int len;

	if (o->short_name && o->long_name)
		len = snprintf(head, sizeof(head), "  -%c, --%s", o->short_name, o->long_name);
	else if (o->long_name)
		len = snprintf(head, sizeof(head), "      --%s", o->long_name);
	else
		len = snprintf(head, sizeof(head), "  -%c", o->short_name);
	if (takes_arg(o) && o->argh && len > 0 && (size_t)len < sizeof(head))
		snprintf(head + len, sizeof(head) - (size_t)len, o->optional_arg ? "[=%s]" : " %s",
			 o->argh);
	fputs(head, out);
	len = (int)strlen(head);
	while (*h) {
		const char *nl = strchr(h, '\n');
		int n = nl ? (int)(nl - h) : (int)strlen(h);

		if (len >= HELP_COL - 1) {
			fputc('\n', out);
			len = 0;
		}
		fprintf(out, "%*s%.*s\n", HELP_COL - len, "", n, h);
		len = 0;
		h += n + (nl ? 1 : 0);
	}
	if (!o->help || !*o->help)
		fputc('\n', out);
}

void options_help(const struct opt_cmd *cmd, const struct opt *opts, FILE *out)
{
	int k;

	fprintf(out, "usage: kvmscope %s %s\n", cmd->name, cmd->synopsis ? cmd->synopsis : "");
	if (cmd->intro)
		fprintf(out, "\n%s", cmd->intro);
	fputc('\n', out);
	for (k = 0; opts[k].type != OPT_T_END; k++) {
		if (opts[k].type == OPT_T_ALIAS)
			continue;
		if (opts[k].type == OPT_T_GROUP)
			fprintf(out, "\n%s\n", opts[k].help);
		else
			print_opt(&opts[k], out);
	}
	fprintf(out, "  -h, --help%*sthis text\n", HELP_COL - 12, "");
	if (cmd->outro)
		fprintf(out, "\n%s", cmd->outro);
}

int parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	};
	size_t i, len = s ? strlen(s) : 0, ulen;
	double v;

	/* the longest unit the text ends with, then the number before it */
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		ulen = strlen(units[i].unit);
		if (ulen < len && !strcmp(s + len - ulen, units[i].unit))
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]) || ks_parse_seconds(s, len - ulen, &v) < 0)
		return -1;
	v *= units[i].mult;
	if (!(v >= 0) || v >= 9.2e18)
		return -1;
	*ns = (uint64_t)llround(v);
	return 0;
}

const char *take_duration(const char *arg, void *value)
{
	struct duration_arg *d = value;

	if (parse_duration_ns(arg, &d->ns) < 0)
		return "takes a duration: a number with a unit, ns, us, ms or s (1ms)";
	d->set = true;
	d->text = arg;
	return NULL;
}
