/*
 * cmd_record.c - kvmscope record (placeholder until it lands).
 */
#include "cli.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("record is not implemented yet.");
}
