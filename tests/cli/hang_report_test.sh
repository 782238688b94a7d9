#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# hang_report_test.sh - `report` and `timeline` end on every real recording,
# on every run, with ASLR on: hang_test.sh's loop over these two commands.
# timeout: 600
KS_HANG_CMDS='report -i|timeline -q -i' exec bash "$(dirname "$0")/hang_test.sh"
