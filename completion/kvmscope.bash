# SPDX-License-Identifier: GPL-2.0-only
# bash completion for kvmscope                                -*- shell-script -*-
#
# Commands, and per command its options, are read from the program itself
# (`kvmscope --help`, `kvmscope CMD --help`) when completing, so that this
# file never lists an option the installed program does not have.
# Arguments named FILE, F, DUMP or P[:A] complete file names, DIR directory
# names, and a|b|c one of the choices.

# The commands of `kvmscope --help`.
_kvmscope_commands()
{
	"$1" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'
}

# "OPTION ARGUMENT" (ARGUMENT empty for flags) for each option of
# `kvmscope CMD --help`: the lines that start with an option, up to the
# first run of two spaces ("  -i, --input FILE     input file").
_kvmscope_options()
{
	"$1" "$2" --help 2>/dev/null | awk '
		/^ +-/ {
			sub(/^ +/, "")
			n = index($0, "  "); if (n) $0 = substr($0, 1, n - 1)
			gsub(/,/, " ")
			k = 0; arg = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^-/) {
					# --OPT[=ARG]: an optional argument only follows "="
					j = index($i, "[="); opt[++k] = j ? substr($i, 1, j - 1) : $i
					continue
				}
				if ($i == "|") continue
				arg = $i; break
			}
			for (i = 1; i <= k; i++) print opt[i], arg
		}'
}

# Sub-commands from the usage lines: "kvmscope pmu check ..." and
# "kvmscope stat [report] ..." give check and report.
_kvmscope_subcommands()
{
	"$1" "$2" --help 2>/dev/null | awk -v cmd="$2" '
		{ for (i = 1; i < NF; i++) if ($i == "kvmscope" && $(i + 1) == cmd) {
			w = $(i + 2); gsub(/[][]/, "", w)
			if (w ~ /^[a-z]+$/) print w
		} }' | sort -u
}

_kvmscope()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	local ks=${words[0]} cmd="" i
	# ~/bin/kvmscope or ./build/kvmscope as typed; else the one in PATH.
	ks=${ks/#\~/$HOME}
	command -v "$ks" >/dev/null 2>&1 || ks=kvmscope

	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$(_kvmscope_commands "$ks") help --help --version" -- "$cur"))
		return
	fi
	if [[ $cmd == help ]]; then
		((cword == i + 1)) &&
			COMPREPLY=($(compgen -W "$(_kvmscope_commands "$ks")" -- "$cur"))
		return
	fi

	local table arg
	table=$(_kvmscope_options "$ks" "$cmd")
	# The argument of the option before the cursor.
	if [[ $prev == -* ]]; then
		arg=$(awk -v o="$prev" '$1 == o { print $2; exit }' <<<"$table")
		if [[ -n $arg ]]; then
			case $arg in
			*DIR*)
				if declare -F _filedir >/dev/null 2>&1; then _filedir -d
				else COMPREPLY=($(compgen -d -- "$cur")); fi ;;
			*FILE* | F | DUMP | P\[:A\])
				if declare -F _filedir >/dev/null 2>&1; then _filedir
				else COMPREPLY=($(compgen -f -- "$cur")); fi ;;
			*\|*)
				COMPREPLY=($(compgen -W "${arg//|/ }" -- "$cur")) ;;
			esac
			return
		fi
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$table")" -- "$cur"))
		return
	fi
	# A sub-command right after the command (pmu check, stat report), else
	# input files.
	if ((cword == i + 1)); then
		COMPREPLY=($(compgen -W "$(_kvmscope_subcommands "$ks" "$cmd")" -- "$cur"))
	fi
	if declare -F _filedir >/dev/null 2>&1; then
		_filedir # adds to COMPREPLY
	else
		COMPREPLY+=($(compgen -f -- "$cur"))
	fi
} &&
	complete -F _kvmscope kvmscope

# ex: filetype=sh
