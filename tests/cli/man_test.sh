#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# man_test.sh - the man pages match the program:
# - every command listed by `kvmscope --help` answers --help with status 0,
#   and `kvmscope help CMD` prints the same text;
# - each has a page man/kvmscope-CMD.1 that renders without warnings and
#   cites kvmscope(1); man/kvmscope.1 exists, renders and names every command;
# - every option of `kvmscope CMD --help` (short and long) is defined in the
#   page (a .TP tag of OPTIONS), and every option the page defines or shows
#   in its SYNOPSIS is in --help (the body may cite other tools' options);
# - every page carries the same date.
set -u
ks=$KVMSCOPE
root=$(cd "$(dirname "$0")/../.." && pwd)
man_dir=$root/man

# Render PAGE; print groff/man warnings (empty when clean).
render_warnings() {
	MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null
}

# Options of a --help text on stdin: the first column of the lines that
# start with an option ("  -i, --input FILE     text"); continuation lines
# and the prose around them are not options.
help_options() {
	awk '/^ +-/ {
		sub(/^ +/, "")
		# the option column ends at the first run of 2+ spaces
		n = index($0, "  "); if (n) $0 = substr($0, 1, n - 1)
		print
	}' | grep -oE -- '(^|[^A-Za-z0-9-])--?[A-Za-z0-9][A-Za-z0-9-]*' | sed 's/^[^-]*//' | sort -u
}

# Options of man page $1: those it defines (the tag line after each .TP or
# .TQ), with $2 = all also those of its SYNOPSIS.  Roff's \- is a hyphen;
# \f fonts and quotes are dropped.
man_options() {
	sed 's/\\-/-/g; s/\\f[BIRP]//g; s/"//g' "$1" | awk -v all="${2:-}" '
		/^\.SH/ { syn = ($2 == "SYNOPSIS"); tag = 0; next }
		/^\.T[PQ]/ { tag = 1; next }
		tag { print; tag = 0; next }
		all && syn && !/^\.(B|BR|RB|I|IR|RI)? *kvmscope/ { print }' |
		grep -oE -- '(^|[^A-Za-z0-9-])--?[A-Za-z0-9][A-Za-z0-9-]*' | sed 's/^[^-]*//' | sort -u
}

cmds=$("$ks" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }')
if [ -z "$cmds" ]; then
	echo "not ok commands: 'kvmscope --help' lists no commands"
	exit 0
fi
for cmd in $cmds; do
	if ! out=$("$ks" "$cmd" --help 2>&1) || [ -z "$out" ]; then
		echo "not ok help[$cmd]: 'kvmscope $cmd --help' failed"
		continue
	fi
	echo "ok help[$cmd]"
	if [ "$("$ks" help "$cmd" 2>&1)" = "$out" ]; then
		echo "ok help-cmd[$cmd]"
	else
		echo "not ok help-cmd[$cmd]: 'kvmscope help $cmd' differs from 'kvmscope $cmd --help'"
	fi
	page=$man_dir/kvmscope-$cmd.1
	if [ ! -f "$page" ]; then
		echo "not ok man[$cmd]: man/kvmscope-$cmd.1 is missing"
		continue
	fi
	w=$(render_warnings "$page")
	if [ -n "$w" ]; then
		echo "not ok man[$cmd]: $(printf '%s' "$w" | head -3 | tr '\n' ' ')"
	else
		echo "ok man[$cmd]"
	fi
	h=$(printf '%s\n' "$out" | help_options)
	m=$(man_options "$page")
	if [ -z "$h" ] || [ -z "$m" ]; then
		echo "not ok options[$cmd]: no options found (help: $(echo $h), page: $(echo $m))"
		continue
	fi
	not_in_page=$(comm -23 <(printf '%s\n' "$h") <(printf '%s\n' "$m") | tr '\n' ' ')
	not_in_help=$(comm -13 <(printf '%s\n' "$h") <(man_options "$page" all) | tr '\n' ' ')
	if [ -z "$not_in_page$not_in_help" ]; then
		echo "ok options[$cmd]"
	else
		echo "not ok options[$cmd]: in --help but not described in the page: ${not_in_page:-none}; in the page but not in --help: ${not_in_help:-none}"
	fi
	if sed -n '/^\.SH SEE ALSO/,$p' "$page" | grep -q '^\.BR kvmscope (1)'; then
		echo "ok see-also[$cmd]"
	else
		echo "not ok see-also[$cmd]: man/kvmscope-$cmd.1 does not cite kvmscope(1)"
	fi
done

# kvmscope(1): the overview names every command's page and the exit codes.
page=$man_dir/kvmscope.1
if [ ! -f "$page" ]; then
	echo "not ok man[kvmscope]: man/kvmscope.1 is missing"
else
	w=$(render_warnings "$page")
	if [ -n "$w" ]; then
		echo "not ok man[kvmscope]: $(printf '%s' "$w" | head -3 | tr '\n' ' ')"
	else
		echo "ok man[kvmscope]"
	fi
	missing=""
	for cmd in $cmds; do
		grep -q "kvmscope\\\\-$cmd (1)" "$page" || missing="$missing $cmd"
	done
	for sec in "EXIT STATUS" ENVIRONMENT FILES EXAMPLES COMMANDS; do
		grep -q "^\.SH \"*$sec" "$page" || missing="$missing section:$sec"
	done
	if [ -z "$missing" ]; then
		echo "ok man-overview"
	else
		echo "not ok man-overview: kvmscope(1) lacks:$missing"
	fi
fi

# One date on every page (.TH NAME 1 DATE ..., after the SPDX comment line).
dates=$(awk 'FNR == 1 && /SPDX/ { next } /^\.TH/ && !seen[FILENAME]++ { print $4; next } FNR == 2 && !seen[FILENAME] { print FILENAME ": no .TH" }' \
	"$man_dir"/*.1 | sort -u)
if [ "$(printf '%s\n' "$dates" | wc -l)" -eq 1 ]; then
	echo "ok man-dates"
else
	echo "not ok man-dates: pages carry different dates: $(echo $dates)"
fi

# --version prints "kvmscope VERSION".
if "$ks" --version | grep -qE '^kvmscope [0-9A-Za-z][^ ]*$'; then
	echo "ok version"
else
	echo "not ok version: 'kvmscope --version' printed '$("$ks" --version 2>&1)'"
fi
