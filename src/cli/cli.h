/*
 * cli.h - shared pieces of the kvmscope command line (one file per command).
 */
#ifndef KVMSCOPE_CLI_H
#define KVMSCOPE_CLI_H

#include <stdbool.h>

#include "kvmscope/error.h"

int cmd_stat(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_unwind(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_pmu(int argc, char **argv);

/* "kvmscope: MSG" on stderr and exit status 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kvmscope: MSG" on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a usage error and exit 2: "kvmscope CMD: MSG; see 'kvmscope CMD --help'". */
_Noreturn void usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
