/*
 * cmd_sample.c - kvmscope sample (placeholder until it lands).
 */
#include "cli.h"

int cmd_sample(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("sample is not implemented yet.");
}
