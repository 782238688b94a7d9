/*
 * cmd_dump.c - kvmscope dump (placeholder until the trace.dat reader lands).
 */
#include "cli.h"

int cmd_dump(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("dump is not implemented yet.");
}
