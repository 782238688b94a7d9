#!/bin/bash
# man_test.sh - every command listed by `kvmscope --help` answers --help with
# status 0 and has a man page that renders without warnings.
set -u
ks=$KVMSCOPE
for cmd in $("$ks" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
	if ! out=$("$ks" "$cmd" --help 2>&1) || [ -z "$out" ]; then
		echo "not ok help[$cmd]: 'kvmscope $cmd --help' failed"
	else
		echo "ok help[$cmd]"
	fi
	page=man/kvmscope-$cmd.1
	if [ ! -f "$page" ]; then
		echo "not ok man[$cmd]: $page is missing"
		continue
	fi
	w=$(man --warnings -l "$page" 2>&1 >/dev/null)
	if [ -n "$w" ]; then
		echo "not ok man[$cmd]: $w"
	else
		echo "ok man[$cmd]"
	fi
done
