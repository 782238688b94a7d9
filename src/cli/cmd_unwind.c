/*
 * cmd_unwind.c - kvmscope unwind (placeholder until it lands).
 */
#include "cli.h"

int cmd_unwind(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("unwind is not implemented yet.");
}
