#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# number_args_test.sh - numbers on the command line go through the checked
# parsers (kvmscope/limits.h): what C's strto*() took silently (a tab or a
# form feed before the number, a sign, hex seconds, a code wider than 32 bits,
# "-1" wrapped to 2^64-1) is one usage error naming the option, exit 2;
# the numbers that were valid keep their meaning (the same output as the
# decimal spelling).
set -u
ks=${KVMSCOPE:?}
H=$KS_SHARED/data/hip24
F=$H/host-tsync.trace.dat
T=${KS_TMP:?}
if [ ! -f "$F" ]; then
	echo "skip number arguments: $F is absent"
	exit 0
fi

# refused NAME WORD ARGS...: exit 2 and one stderr line naming WORD
refused() {
	local name=$1 word=$2
	shift 2
	timeout 60 "$ks" "$@" > "$T/out" 2> "$T/err" < /dev/null
	local rc=$? lines
	lines=$(wc -l < "$T/err")
	if [ $rc = 2 ] && [ "$lines" = 1 ] && grep -qF -- "$word" "$T/err"; then
		echo "ok number refused: $name: $(cat "$T/err")"
	else
		echo "not ok number refused: $name: exit $rc (want 2), $lines stderr lines (want 1 naming '$word'): $(head -2 "$T/err" | tr '\n' ' ')"
	fi
}

# same NAME "ARGS A" "ARGS B": both exit 0 with the same output (but the
# lines that quote --than's argument)
same() {
	local name=$1 a=$2 b=$3 ra rb
	# shellcheck disable=SC2086
	timeout 60 "$ks" $a > "$T/a" 2> "$T/a.err" < /dev/null; ra=$?
	# shellcheck disable=SC2086
	timeout 60 "$ks" $b > "$T/b" 2> "$T/b.err" < /dev/null; rb=$?
	if [ $ra = 0 ] && [ $rb = 0 ] && [ -s "$T/a" ] &&
	   cmp -s <(grep -v 'slower than' "$T/a") <(grep -v 'slower than' "$T/b"); then
		echo "ok number same: $name"
	else
		echo "not ok number same: $name: exit $ra and $rb, $(head -1 "$T/a.err") $(head -1 "$T/b.err")"
	fi
}

tab=$'\t'
refused "whole number after a tab" --vcpu stat -i "$F" --vcpu "${tab}1"
refused "whole number after a form feed" --vcpu stat -i "$F" --vcpu $'\f1'
refused "u64 after a tab, wrapped" --guest-kaslr-offset report -i "$F" \
	--guest-kaslr-offset "${tab}-1"
refused "u64 after a tab" --guest-kaslr-offset report -i "$F" --guest-kaslr-offset "${tab}5"
refused "seconds after a space" --duration stat -i "$F" --live -d " 1"
refused "seconds in hex" --duration stat -i "$F" --live -d 0x1
refused "seconds, nan" --duration stat -i "$F" --live -d nan
refused "exit code -1" "exit reason '-1'" report -i "$F" --sample-exits -1
refused "exit code over 32 bits" "exit reason '0x1ffffffff'" report -i "$F" \
	--sample-exits 0x1ffffffff
refused "exit code after a space" "exit reason ' 5'" report -i "$F" --sample-exits " 5"

same "--vcpu 0x1 is --vcpu 1" "stat -i $F --vcpu 0x1" "stat -i $F --vcpu 1"
same "--than 0.001s is --than 1ms" "stat -i $F --than 0.001s" "stat -i $F --than 1ms"
same "--than 1e6 is --than 1000us" "stat -i $F --than 1e6" "stat -i $F --than 1000us"
same "--sample-exits 0x1e is 30" "report -i $F --sample-exits 0x1e --csv" \
	"report -i $F --sample-exits 30 --csv"
