/*
 * cmd_stat.c - kvmscope stat (placeholder).
 */
#include "cli.h"

int cmd_stat(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("stat is not implemented yet.");
}
