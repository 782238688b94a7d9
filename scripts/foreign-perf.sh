#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# foreign-perf.sh - Debian's perf of other architectures, run under qemu-user,
# as the oracle of `kvmscope stat --format perf` (tests/cli/foreign_perf_test.sh).
#
#   foreign-perf.sh install [ARCH...]   install qemu-user-static and unpack
#                                       linux-perf with its libraries (default:
#                                       every ARCH); idempotent, fast when cached
#   foreign-perf.sh check ARCH          exit 0 when ARCH's perf is ready, else
#                                       print one line saying why, exit 1
#   foreign-perf.sh run ARCH ARGS...    run that perf: ARGS as for perf, e.g.
#                                       `run arm64 kvm -i FILE stat report`
#   foreign-perf.sh version ARCH        the linux-perf package version
#   foreign-perf.sh root ARCH           the unpacked root directory
#
# ARCH: arm64, powerpc, s390, riscv (kvmscope's names) or Debian's arm64,
# ppc64el, s390x, riscv64.  perf 6.1 comes from bookworm, riscv64's from
# trixie (perf 6.12): bookworm has no riscv64 build.
#
# The packages are fetched with a private apt configuration (its own source
# list, lists, cache; an empty dpkg status) from the Debian mirror the
# machine's own apt sources name, so the machine's apt sources, architectures
# and package state are untouched (only qemu-user-static is installed the
# ordinary way).  Each .deb's sha256 is recorded in CACHE/ARCH/SHA256SUMS.
#
# CACHE: $KS_PERF_CACHE, else /var/cache/kvmscope-perf when writable, else
# ${XDG_CACHE_HOME:-~/.cache}/kvmscope-perf.  Outside the repository, reused
# by every checkout and run.  An install that fails (registry unreachable)
# leaves CACHE/ARCH/FAILED with the reason, which `check` prints.
# KS_DEBIAN_MIRROR overrides the mirror (a URL ending in /debian).
set -u

cache_dir() {
	if [ -n "${KS_PERF_CACHE:-}" ]; then
		echo "$KS_PERF_CACHE"
	elif mkdir -p /var/cache/kvmscope-perf 2>/dev/null && [ -w /var/cache/kvmscope-perf ]; then
		echo /var/cache/kvmscope-perf
	else
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/kvmscope-perf"
	fi
}
CACHE=$(cache_dir)
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
ALL="arm64 powerpc s390 riscv"

# arch -> "debian-arch suite qemu"
arch_info() {
	case $1 in
	arm64 | aarch64) echo "arm64 bookworm qemu-aarch64-static" ;;
	powerpc | ppc64el | ppc64le) echo "ppc64el bookworm qemu-ppc64le-static" ;;
	s390 | s390x) echo "s390x bookworm qemu-s390x-static" ;;
	riscv | riscv64) echo "riscv64 trixie qemu-riscv64-static" ;;
	*) return 1 ;;
	esac
}

die() { echo "foreign-perf: $*" >&2; exit 2; }

# The Debian mirror of the machine's own apt sources (deb822 or one-line).
mirror() {
	local f u
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
		[ -f "$f" ] || continue
		u=$(awk '
			/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }
			/^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*\/debian\/?$/) { print $i; exit } }' "$f")
		[ -n "$u" ] && { echo "${u%/}"; return 0; }
	done
	return 1
}

ensure_qemu() { # qemu-binary
	command -v "$1" >/dev/null && return 0
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	echo "foreign-perf: installing qemu-user-static" >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq >/dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null 2>&1; }
	command -v "$1" >/dev/null
}

# The kvm_hv event formats that powerpc's perf reads from the running
# system's tracefs: qemu-user resolves absolute paths inside the -L root
# first, so they go under ROOT/sys/kernel/{,debug/}tracing.
place_formats() { # root
	local root=$1 f ev d
	for f in "$REPO"/tests/fixtures/powerpc/kvm_hv/*.format; do
		[ -f "$f" ] || continue
		ev=$(basename "$f" .format)
		for d in "$root/sys/kernel/tracing" "$root/sys/kernel/debug/tracing"; do
			mkdir -p "$d/events/kvm_hv/$ev"
			cp "$f" "$d/events/kvm_hv/$ev/format"
		done
	done
}

install_one() { # arch
	local info darch suite qemu dir root apt url names n
	info=$(arch_info "$1") || die "unknown architecture '$1'"
	read -r darch suite qemu <<<"$info"
	dir="$CACHE/$darch"
	root="$dir/root"
	mkdir -p "$dir" || return 1
	# One install of an architecture at a time (make check, CI, by hand).
	local lock
	exec {lock}>"$dir/LOCK"
	flock "$lock"
	if [ -f "$dir/COMPLETE" ] && [ -x "$root/usr/bin/perf" ]; then
		[ "$darch" = ppc64el ] && place_formats "$root"
		ensure_qemu "$qemu" && return 0
		echo "qemu-user-static cannot be installed" > "$dir/FAILED"
		return 1
	fi
	rm -f "$dir/FAILED"
	fail() { echo "$*" > "$dir/FAILED"; echo "foreign-perf: $darch: $*" >&2; return 1; }
	ensure_qemu "$qemu" || { fail "qemu-user-static cannot be installed"; return 1; }
	url=${KS_DEBIAN_MIRROR:-$(mirror)} || { fail "no Debian mirror in the machine's apt sources"; return 1; }
	apt="$dir/apt"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$dir/debs"
	# Signed by the machine's Debian keyring when it knows the suite's key.
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	echo "deb [arch=$darch signed-by=$keyring] $url $suite main" > "$apt/sources.list"
	local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Dir::State::status=/dev/null
		-o "APT::Architectures::=$darch" -o APT::Sandbox::User=root
		-o Acquire::Retries=1 -o Acquire::http::Timeout=30)
	echo "foreign-perf: $darch: fetching the $suite index" >&2
	if ! apt-get "${opts[@]}" update -qq >"$dir/update.log" 2>&1 || grep -q '^[EW]: ' "$dir/update.log"; then
		# The bookworm keyring may not know a newer suite's key: fall back
		# to trusting the index (every .deb's sha256 is still recorded).
		echo "deb [arch=$darch trusted=yes] $url $suite main" > "$apt/sources.list"
		if ! apt-get "${opts[@]}" update -qq >"$dir/update.log" 2>&1 || grep -q '^[EW]: ' "$dir/update.log"; then
			fail "apt-get update of $suite/$darch failed: $(grep -m1 '^[EW]' "$dir/update.log")"
			return 1
		fi
	fi
	names=$(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances --no-pre-depends "linux-perf:$darch" 2>"$dir/depends.log" |
		awk '/^[a-z0-9]/ { sub(/:.*/, ""); print }' | sort -u)
	[ -n "$names" ] || { fail "no linux-perf:$darch in $suite: $(head -1 "$dir/depends.log")"; return 1; }
	echo "foreign-perf: $darch: downloading the packages of $(echo "$names" | wc -l) dependencies" >&2
	# A few (mime-support, ...) have no $darch build: only those with one,
	# in one apt-get call (its downloads run in parallel); files kept from
	# an interrupted run (apt-get names them NAME_VERSION_ARCH) are skipped.
	local have want=""
	have=$(apt-cache "${opts[@]}" show --no-all-versions $(printf "%s:$darch " $names) 2>/dev/null |
		awk '/^Package:/ { p = $2 } /^Architecture:/ && ($2 == "'"$darch"'" || $2 == "all") { print p }')
	for p in $have; do
		compgen -G "$dir/debs/${p}_*_$darch.deb" >/dev/null ||
			compgen -G "$dir/debs/${p}_*_all.deb" >/dev/null || want="$want $p:$darch"
	done
	if [ -n "$want" ] && ! (cd "$dir/debs" && apt-get "${opts[@]}" download -qq $want >"$dir/download.log" 2>&1); then
		fail "apt-get download failed: $(grep -m1 '^[EW]' "$dir/download.log")"
		return 1
	fi
	n=$(echo "$have" | wc -w)
	ls "$dir"/debs/linux-perf_*.deb >/dev/null 2>&1 || { fail "download of linux-perf:$darch failed"; return 1; }
	rm -rf "$root"
	mkdir -p "$root"
	for d in "$dir"/debs/*.deb; do
		dpkg -x "$d" "$root" || { fail "dpkg -x $(basename "$d") failed"; return 1; }
	done
	(cd "$dir/debs" && sha256sum -- *.deb) > "$dir/SHA256SUMS"
	# Merged /usr (trixie ships nothing in /lib): the loader is looked up as /lib/...
	[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"
	# Absolute symlinks (ppc64el's lib64/ld64.so.2) would escape the root.
	local l t
	while IFS= read -r l; do
		t=$(readlink "$l")
		case $t in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$root$t")" "$l" ;; esac
	done < <(find "$root" -type l)
	[ "$darch" = ppc64el ] && place_formats "$root"
	local ver
	ver=$(dpkg-deb -f "$dir"/debs/linux-perf_*.deb Version)
	if ! "$qemu" -L "$root" "$root/usr/bin/perf" --version >"$dir/perf-version" 2>&1; then
		fail "the unpacked perf does not run: $(head -1 "$dir/perf-version")"; return 1
	fi
	echo "$ver $suite $(cat "$dir/perf-version")" > "$dir/COMPLETE"
	echo "foreign-perf: $darch: linux-perf $ver ($suite), $n packages, $(du -sh "$dir/debs" | cut -f1) of .debs, $(du -sh "$root" | cut -f1) unpacked" >&2
	return 0
}

cmd=${1:-}
shift || true
case $cmd in
install)
	[ $# -gt 0 ] || set -- $ALL
	rc=0
	for a in "$@"; do install_one "$a" || rc=1; done
	exit $rc
	;;
check)
	[ $# -eq 1 ] || die "usage: check ARCH"
	info=$(arch_info "$1") || die "unknown architecture '$1'"
	read -r darch suite qemu <<<"$info"
	dir="$CACHE/$darch"
	if [ -f "$dir/COMPLETE" ] && [ -x "$dir/root/usr/bin/perf" ] && command -v "$qemu" >/dev/null; then
		exit 0
	fi
	if [ -f "$dir/FAILED" ]; then
		echo "$darch perf not installed: $(head -1 "$dir/FAILED")"
	elif ! command -v "$qemu" >/dev/null; then
		echo "$darch perf not installed: $qemu is missing (scripts/foreign-perf.sh install)"
	else
		echo "$darch perf not installed in $dir (scripts/foreign-perf.sh install)"
	fi
	exit 1
	;;
run)
	[ $# -ge 1 ] || die "usage: run ARCH ARGS..."
	info=$(arch_info "$1") || die "unknown architecture '$1'"
	read -r darch suite qemu <<<"$info"
	shift
	root="$CACHE/$darch/root"
	[ -x "$root/usr/bin/perf" ] || die "$darch perf is not installed (scripts/foreign-perf.sh install $darch)"
	exec "$qemu" -L "$root" "$root/usr/bin/perf" "$@"
	;;
version | root)
	[ $# -eq 1 ] || die "usage: $cmd ARCH"
	info=$(arch_info "$1") || die "unknown architecture '$1'"
	read -r darch suite qemu <<<"$info"
	[ -f "$CACHE/$darch/COMPLETE" ] || die "$darch perf is not installed"
	if [ "$cmd" = root ]; then echo "$CACHE/$darch/root"; else cut -d' ' -f1,2 "$CACHE/$darch/COMPLETE"; fi
	;;
*)
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
