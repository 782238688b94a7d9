#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# convert_meta_test.sh - kvmscope convert copies the input's metadata byte
# for byte: event and ftrace formats, header_page / header_event, kallsyms
# (symbol types included), printk formats and saved cmdlines.
#
# Oracles:
#  - trace-cmd (Debian's 3.1.6 reads zstd and uncompressed files): `trace-cmd
#    dump --events/--ftrace/--kallsyms/--printk/--cmd-lines/--headers` of
#    kvm-formats-zstd.trace.dat and of its copies print the same text (the
#    first line, which gives the section's file offset and stored size, aside).
#  - hip24 (zlib, which that trace-cmd cannot read): what kvmscope's reader
#    extracted from the original (tools/print-meta) equals what trace-cmd
#    dump shows of the zstd copy, and what the reader extracts from every copy.
#  - `kvmscope dump -t` of each copy equals that of its original.
# About 60 process runs on 8 recordings of up to 16 MB of kallsyms each:
# timeout: 600
set -u
ks=$KVMSCOPE
pm=$KS_BUILD/tools/print-meta
data=$KS_SHARED/data
dir=$KS_TMP/convert_meta
mkdir -p "$dir"

have() { command -v "$1" >/dev/null 2>&1; }

if [ ! -x "$pm" ]; then
	echo "skip convert_meta: $pm is not built (make tools)"
	exit 0
fi
if ! trace-cmd dump -h >/dev/null 2>&1 && ! have trace-cmd; then
	tc=
else
	tc=1
fi

# trace-cmd dump SECTION of FILE without the lines naming sections and sizes
tcdump() {
	trace-cmd dump "--$1" -i "$2" 2>/dev/null | grep -v $'^\t\\[Section\\|^\t\\[.*bytes\\]$\\|^\t\\[.*format, [0-9]* \\(events\\|systems\\)\\]$'
}

# every text the reader keeps of FILE into DIR (one open), and dump -t
extract() { # file dir
	mkdir -p "$2"
	"$pm" -d "$2" "$1" 2>"$2.err" || return 1
	"$ks" dump -t "$1" > "$2/dump" 2>&1
	return 0
}

check_copy() { # original-dir copy name
	local o=$1 c=$2 name=$3 what bad=
	if ! extract "$c" "$dir/c"; then
		echo "not ok $name: the copy: $(head -1 "$dir/c.err")"
		return
	fi
	for what in formats header_page header_event kallsyms printk cmdlines uname dump; do
		if ! cmp -s "$o/$what" "$dir/c/$what"; then
			bad="$what differs ($(wc -c < "$o/$what") vs $(wc -c < "$dir/c/$what") bytes)"
			[ "$what" = dump ] && bad="dump -t differs: $(diff "$o/dump" "$dir/c/dump" | sed -n 2p)"
			break
		fi
	done
	if [ -z "$bad" ] && [ ! -s "$o/formats" ]; then
		bad="the reader kept no formats of the original"
	fi
	if [ -n "$bad" ]; then
		echo "not ok $name: $bad"
	else
		echo "ok $name ($(wc -c < "$o/formats") bytes of formats, $(wc -c < "$o/kallsyms") of kallsyms, $(wc -l < "$o/dump") dump lines)"
	fi
}

# trace-cmd's view of COPY equals the original's: trace-cmd's own (tc) or,
# where trace-cmd cannot read the original, what kvmscope's reader kept (pm)
check_tracecmd() { # copy name truth(tc|pm) original original-dir
	local c=$1 name=$2 truth=$3 o=$4 odir=$5 sec bad=
	for sec in events ftrace kallsyms printk cmd-lines headers; do
		tcdump "$sec" "$c" > "$dir/c.tc"
		if [ "$truth" = tc ]; then
			tcdump "$sec" "$o" > "$dir/o.tc"
		else
			case $sec in
			cmd-lines|headers) continue ;; # trace-cmd prints these parsed
			kallsyms|printk) { cat "$odir/$sec"; echo; } > "$dir/o.tc" ;; # dump adds a newline
			*) cp "$odir/$sec" "$dir/o.tc" ;;
			esac
		fi
		if [ ! -s "$dir/o.tc" ] && [ "$sec" != cmd-lines ]; then
			bad="no $sec text to compare"
			break
		fi
		if ! cmp -s "$dir/o.tc" "$dir/c.tc"; then
			bad="trace-cmd dump --$sec differs: $(diff "$dir/o.tc" "$dir/c.tc" | sed -n 2p | cut -c1-100)"
			break
		fi
	done
	if [ -n "$bad" ]; then
		echo "not ok $name: $bad"
	else
		echo "ok $name"
	fi
}

files="$data/kvm-formats-zstd.trace.dat"
for f in "$data"/hip24/*.trace.dat; do
	files="$files $f"
done

for f in $files; do
	b=$(basename "$f" .trace.dat)
	rm -rf "$dir/o"
	if ! extract "$f" "$dir/o"; then
		echo "not ok convert_meta_$b: the original: $(head -1 "$dir/o.err")"
		continue
	fi
	# every layout for one file; the v7 zstd copy (which trace-cmd reads)
	# of the others, and one v6 file among them
	case $b in
	kvm-formats-zstd) layouts="7:zstd 7:none 7:zlib 6:none" ;;
	host-tsync) layouts="7:zstd 6:none" ;;
	*) layouts="7:zstd" ;;
	esac
	for vc in $layouts; do
		v=${vc%%:*} c=${vc#*:}
		out="$dir/$b-v$v-$c.dat"
		if ! "$ks" convert -q -i "$f" -o "$out" --file-version "$v" --compression "$c" 2>"$dir/err"; then
			echo "not ok convert_meta_${b}_v${v}_$c: $(head -1 "$dir/err")"
			continue
		fi
		rm -rf "$dir/c"
		check_copy "$dir/o" "$out" "convert_meta_${b}_v${v}_$c"
		if [ -n "$tc" ] && [ "$c" != zlib ]; then
			case $f in
			*/hip24/*) check_tracecmd "$out" "convert_meta_tracecmd_${b}_v${v}_$c" pm "$f" "$dir/o" ;;
			*) check_tracecmd "$out" "convert_meta_tracecmd_${b}_v${v}_$c" tc "$f" "$dir/o" ;;
			esac
		elif [ -z "$tc" ]; then
			echo "skip convert_meta_tracecmd_${b}_v${v}_$c: no trace-cmd"
		fi
		rm -f "$out"
	done
done
