/*
 * cmd_top.c - kvmscope top (placeholder until it lands).
 */
#include "cli.h"

int cmd_top(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("top is not implemented yet.");
}
