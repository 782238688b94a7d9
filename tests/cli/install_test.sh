#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# install_test.sh - `make install DESTDIR=... PREFIX=/usr` lays out the
# binary, every man page, the shell completion and the Prometheus rules and
# Grafana dashboard (usr/share/kvmscope/); the installed binary
# runs and prints its version; the bash completion registers itself and
# completes; each installed page renders without warnings; uninstall
# removes what install put there.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KS_BUILD:-$root/build}
dest=$KS_TMP/install-root
rm -rf "$dest"
# The binary of this build is installed as it is (BUILD=...; SAN=1 for
# build-san, the same flags).  The version is the one it was built with: a
# tree edited since ("-dirty") must not relink the binary that the tests
# running beside this one execute.
san=""
case ${build##*/} in *-san) san=1 ;; esac
ver=()
[ -s "$build/version" ] && ver=(KS_VERSION="$(cat "$build/version")")
if ! out=$(make -C "$root" --no-print-directory install SAN="$san" BUILD="$build" "${ver[@]}" DESTDIR="$dest" PREFIX=/usr 2>&1); then
	echo "not ok install: make install failed: $(printf '%s' "$out" | tail -3 | tr '\n' ' ')"
	exit 0
fi
echo "ok install"

bin=$dest/usr/bin/kvmscope
man1=$dest/usr/share/man/man1
bashc=$dest/usr/share/bash-completion/completions/kvmscope
zshc=$dest/usr/share/zsh/site-functions/_kvmscope
missing=""
[ -x "$bin" ] || missing="$missing usr/bin/kvmscope"
for page in "$root"/man/*.1; do
	[ -f "$man1/${page##*/}" ] || missing="$missing usr/share/man/man1/${page##*/}"
done
[ -f "$man1/kvmscope.1" ] || missing="$missing usr/share/man/man1/kvmscope.1"
[ -f "$bashc" ] || missing="$missing ${bashc#$dest/}"
[ -f "$zshc" ] || missing="$missing ${zshc#$dest/}"
for f in "$root"/share/kvmscope/*; do
	cmp -s "$f" "$dest/usr/share/kvmscope/${f##*/}" || missing="$missing usr/share/kvmscope/${f##*/}"
done
if [ -z "$missing" ]; then
	echo "ok install-layout"
else
	echo "not ok install-layout: missing:$missing"
fi
# Nothing outside the prefix.
stray=$(cd "$dest" && find . -mindepth 1 -maxdepth 1 ! -name usr)
if [ -z "$stray" ]; then
	echo "ok install-prefix"
else
	echo "not ok install-prefix: installed outside /usr: $stray"
fi

want=$(make -C "$root" --no-print-directory -s "${ver[@]}" print-version 2>/dev/null)
got=$("$bin" --version 2>&1)
if [ -n "$want" ] && [ "$got" = "kvmscope $want" ]; then
	echo "ok install-version"
else
	echo "not ok install-version: '$got', expected 'kvmscope $want'"
fi

# The completion registers itself, with and without bash-completion loaded,
# and completes the commands and a command's options from the binary.
if reg=$(bash -c 'source "$1"; complete -p kvmscope' _ "$bashc" 2>&1) &&
	[ "$reg" = "complete -F _kvmscope kvmscope" ]; then
	echo "ok completion-bash"
else
	echo "not ok completion-bash: 'complete -p kvmscope' printed '$reg'"
fi
complete_words() { # WORD... : completions of the last word, sorted
	PATH="$dest/usr/bin:$PATH" bash -c '
		[ -f /usr/share/bash-completion/bash_completion ] &&
			source /usr/share/bash-completion/bash_completion 2>/dev/null
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_kvmscope kvmscope "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$bashc" "$@" | tr '\n' ' '
}
got=$(complete_words kvmscope st)
[ "$got" = "stat " ] || echo "not ok completion-words: 'kvmscope st' gave '$got'"
got=$(complete_words kvmscope convert --file-v)
[ "$got" = "--file-version " ] || echo "not ok completion-words: 'convert --file-v' gave '$got'"
got=$(complete_words kvmscope convert --file-version '')
[ "$got" = "6 7 " ] || echo "not ok completion-words: 'convert --file-version' gave '$got'"
# Every long option of every command's --help is offered.
bad=""
for cmd in $("$bin" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
	want=$("$bin" "$cmd" --help | awk '/^ +-/' | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u | tr '\n' ' ')
	got=$(complete_words kvmscope "$cmd" --)
	for o in $want; do
		case " $got " in *" $o "*) ;; *) bad="$bad $cmd:$o" ;; esac
	done
done
if [ -z "$bad" ]; then
	echo "ok completion-words"
else
	echo "not ok completion-words: not offered:$bad"
fi
if command -v zsh >/dev/null; then
	if zsh -n "$zshc" 2>/dev/null; then
		echo "ok completion-zsh"
	else
		echo "not ok completion-zsh: $(zsh -n "$zshc" 2>&1 | head -2 | tr '\n' ' ')"
	fi
else
	echo "skip completion-zsh: zsh is not installed"
fi

# Every installed page renders without warnings and opens with man -l.
for page in "$man1"/*.1; do
	name=${page##*/}
	w=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	if [ -n "$w" ]; then
		echo "not ok install-man[$name]: $(printf '%s' "$w" | head -2 | tr '\n' ' ')"
	elif ! MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q '^NAME'; then
		echo "not ok install-man[$name]: renders no NAME section"
	else
		echo "ok install-man[$name]"
	fi
done

# uninstall removes every file install put there.
make -C "$root" --no-print-directory uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1
left=$(find "$dest" -type f | sed "s|^$dest/||")
[ -d "$dest/usr/share/kvmscope" ] && left="$left usr/share/kvmscope/"

if [ -z "$left" ]; then
	echo "ok uninstall"
else
	echo "not ok uninstall: left: $(echo $left)"
fi
rm -rf "$dest"
