/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * options.h - one option layer for every kvmscope command.
 *
 * A command describes its options in a table (like git's parse-options or
 * perf's OPT_* arrays); parse_options() validates every value through one
 * parser per kind (numbers with their range, hex, sizes, seconds, choices),
 * refuses conflicting options and a repeated option whose values differ,
 * and turns every mistake into one usage line with exit status 2:
 *
 *	kvmscope stat: --vcpu takes a whole number from 0 to 4095, not 'abc'; see 'kvmscope stat --help'.
 *
 * The command's --help text is generated from the same table, so the help,
 * the man page test and the parser cannot drift apart.
 *
 *	static const struct opt opts[] = {
 *		OPT_INPUT('i', "input", &a.input, "input file (default perf.data.guest)"),
 *		OPT_INT(0, "vcpu", &a.vcpu, "N", "only vCPU N", 0, 4095),
 *		OPT_SET(0, "json", &a.format, FMT_JSON, "JSON output", "format"),
 *		OPT_END(),
 *	};
 *	first = parse_options(&cmd_desc, opts, argc, argv);
 */
#ifndef KVMSCOPE_CLI_OPTIONS_H
#define KVMSCOPE_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum opt_type {
	OPT_T_END,
	OPT_T_GROUP,    /* a heading in --help; no option */
	OPT_T_FLAG,     /* bool = true */
	OPT_T_SET,      /* int = .set */
	OPT_T_STRING,   /* const char * */
	OPT_T_INT,      /* long long in [min, max]; decimal, or hex with 0x */
	OPT_T_U64,      /* uint64_t, decimal or hex with 0x (addresses, offsets) */
	OPT_T_SECONDS,  /* double seconds in [min, max] (whole milli-units) */
	OPT_T_SIZE,     /* uint64_t bytes, with an optional K, M or G suffix */
	OPT_T_CHOICE,   /* int = index of the value in .choices */
	OPT_T_LIST,     /* appended to a const char *[.max] with an int count */
	OPT_T_CALLBACK, /* .cb(arg, .value) returns 0 or a message (usage error) */
	OPT_T_INPUT,    /* one input file: a second one is an error */
	OPT_T_ALIAS,    /* another spelling of the option named .help (not in --help) */
};

struct opt {
	enum opt_type type;
	int short_name;          /* 0: none */
	const char *long_name;   /* NULL for a group */
	void *value;
	const char *argh;        /* the argument's name in --help ("FILE", "N") */
	const char *help;        /* may hold '\n' for more lines */
	long long min, max;      /* OPT_T_INT, OPT_T_SECONDS (in ms), OPT_T_LIST: max count */
	long long set;           /* OPT_T_SET */
	const char *const *choices; /* OPT_T_CHOICE: NULL-terminated */
	int *count;              /* OPT_T_LIST */
	const char *(*cb)(const char *arg, void *value); /* OPT_T_CALLBACK */
	const char *excl;        /* options of one exclusive group conflict */
	const char *second;      /* OPT_T_INPUT: what to use for a second input */
	bool optional_arg;       /* OPT_T_CALLBACK: the argument may be absent (NULL) */
};

#define OPT_END() { .type = OPT_T_END }
#define OPT_GROUP(h) { .type = OPT_T_GROUP, .help = (h) }
#define OPT_FLAG(s, l, v, h) { .type = OPT_T_FLAG, .short_name = (s), .long_name = (l), \
	.value = (v), .help = (h) }
#define OPT_SET(s, l, v, val, h, group) { .type = OPT_T_SET, .short_name = (s), \
	.long_name = (l), .value = (v), .set = (val), .help = (h), .excl = (group) }
#define OPT_STRING(s, l, v, a, h) { .type = OPT_T_STRING, .short_name = (s), .long_name = (l), \
	.value = (v), .argh = (a), .help = (h) }
#define OPT_INT(s, l, v, a, h, lo, hi) { .type = OPT_T_INT, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h), .min = (lo), .max = (hi) }
#define OPT_U64(s, l, v, a, h) { .type = OPT_T_U64, .short_name = (s), .long_name = (l), \
	.value = (v), .argh = (a), .help = (h) }
#define OPT_SECONDS(s, l, v, h, lo_ms, hi_ms) { .type = OPT_T_SECONDS, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = "SECS", .help = (h), .min = (lo_ms), \
	.max = (hi_ms) }
#define OPT_SIZE(s, l, v, a, h) { .type = OPT_T_SIZE, .short_name = (s), .long_name = (l), \
	.value = (v), .argh = (a), .help = (h) }
#define OPT_CHOICE(s, l, v, a, h, names) { .type = OPT_T_CHOICE, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h), .choices = (names) }
#define OPT_LIST(s, l, v, n, maxn, a, h) { .type = OPT_T_LIST, .short_name = (s), \
	.long_name = (l), .value = (v), .count = (n), .max = (maxn), .argh = (a), .help = (h) }
#define OPT_CALLBACK(s, l, v, a, h, fn) { .type = OPT_T_CALLBACK, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h), .cb = (fn) }
/* -S / --LONG mean the option whose long name is TARGET (perf's spellings,
 * the sort key's two names); not listed in --help. */
#define OPT_ALIAS(s, l, target) { .type = OPT_T_ALIAS, .short_name = (s), .long_name = (l), \
	.help = (target) }
#define OPT_INPUT(s, l, v, h, instead) { .type = OPT_T_INPUT, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = "FILE", .help = (h), .second = (instead) }

/* What --help prints around the table. */
struct opt_cmd {
	const char *name;     /* "stat" */
	const char *synopsis; /* "[-i FILE] [options]" */
	const char *intro;    /* paragraphs before the options */
	const char *outro;    /* paragraphs after them; NULL for none */
	bool stop_at_operand; /* options end at the first operand (a command to run) */
};

/* Parse ARGV[1..ARGC) against OPTS (getopt_long rules: options and operands
 * may mix, "--" ends options, --name=value and unique prefixes work).  -h and
 * --help print the help and exit 0.  Returns the index of the first operand
 * in the permuted ARGV.  Mistakes exit 2 with one line (usage_error). */
int parse_options(const struct opt_cmd *cmd, const struct opt *opts, int argc, char **argv);

/* The help text generated from OPTS. */
void options_help(const struct opt_cmd *cmd, const struct opt *opts, FILE *out);

/* Whether the option named LONG_NAME was given in the last parse_options()
 * of OPTS (for defaults that depend on other options). */
bool option_given(const struct opt *opts, const char *long_name);

/* The one validated number parser the table uses, for operands: a whole
 * number in [MIN, MAX], decimal or 0x hex.  0, or -1 when S is not one. */
int parse_whole(const char *s, long long min, long long max, long long *out);

/* --time, perf's syntax: "START,END" in seconds of the input's clock (as
 * `kvmscope dump` prints them; either side may be empty), or percentages
 * of the input's time span: "A%-B%", or "P%/N" for the Nth slice of P%. */
struct time_window {
	bool set, percent;
	double start, end; /* seconds, or percent; end < 0: open */
};
const char *take_time_window(const char *arg, void *value);
#define OPT_TIME(w) OPT_CALLBACK(0, "time", (w), "START,END", \
	"only events in this time window: seconds as dump prints\n" \
	"them (START, or ,END alone) or percentages of the\n" \
	"input's span (10%-20%, or 10%/2: the second tenth)", take_time_window)
/* Limit SRC (opened from PATH) to W; percentages are resolved by reading
 * PATH once more for the span of its events.  Dies on errors. */
struct ks_source;
void apply_time_window(struct ks_source *src, const char *path, const struct time_window *w);

/* --limit NAME=VALUE (repeatable): raise a budget of the run (limits.h). */
const char *take_limit(const char *arg, void *limits);
#define OPT_LIMIT(l) OPT_CALLBACK(0, "limit", (l), "NAME=VAL", \
	"raise a budget of the run: memory=SIZE (buffered input),\n" \
	"tables=SIZE (kept per event, the rest to $TMPDIR),\n" \
	"threads=N (distinct threads), objects=N", take_limit)

/* The window W of PATH in nanoseconds of its clock; false when W is unset. */
bool resolve_time_window(const char *path, const struct time_window *w, uint64_t *start,
			 uint64_t *end);

/* A comma list of names ("vm,vcpu") as the OR of their BITS (NAMES is
 * NULL-terminated; names may share bits, as aliases).  0 with *OUT set, or
 * -1 when S is empty, too long or names something else. */
int parse_name_set(const char *s, const char *const *names, const unsigned *bits,
		   unsigned *out);

/* PIDS from "PID[,PID...]": process ids 1..INT32_MAX, at most MAX of
 * them (appended at *N).  0, or -1 when S is not such a list. */
int parse_pid_list(const char *s, int32_t *pids, int max, int *n);

/* A duration as perf-prof's --than takes it: a whole or decimal number with
 * a unit, ns, us, ms or s ("1ms", "2.5us"); a bare number is nanoseconds.
 * 0 with *NS set, or -1 when S is not one (or past 2^63 ns). */
int parse_duration_ns(const char *s, uint64_t *ns);
/* The table entry: VALUE points at a struct duration_arg. */
struct duration_arg {
	bool set;
	uint64_t ns;
	const char *text;  /* as given */
};
const char *take_duration(const char *arg, void *value);

#endif
