#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0-only
# no_global_state.pl DIR - find process-wide state and process-wide calls in
# the C sources under DIR (DIR/cli excepted), for no_global_state_test.sh.
# One line per finding, "FILE:LINE: what"; nothing when DIR is clean.
#
# With comments, strings and preprocessor lines removed, the statements are
# split at ; { } with their brace depth.  Found:
#  - a variable declared static (file or function scope) that is not const
#    itself: "static const T x[]" and "static const T *const p" pass,
#    "static const char *p" (a mutable pointer) does not;
#  - a variable defined at file scope (not extern) that is not const itself,
#    also the declarators after a type body ("struct s { ... } x;");
#  - a call of a function that acts on the whole process ($ENV{CALLS}, a
#    regular expression of names; members such as o->exit() are not calls
#    of exit).
use strict;
use warnings;

my $dir = shift or die "usage: no_global_state.pl DIR\n";
my $calls = $ENV{CALLS} or die "CALLS is not set\n";
# BPF programs (*.bpf.c, clang -target bpf) run in the kernel: their
# file-scope maps and .rodata are kernel objects of each load, which the
# engine that loaded them owns and frees, not state of this process.
my @files = sort grep { !m{^\Q$dir\E/cli/} && !m{\.bpf\.c$} } split /\n/, `find '$dir' -name '*.[ch]'`;

# Is the object declared by DECL (without its initializer) const itself?
sub object_const {
	my ($d) = @_;
	$d =~ s/\[[^\]]*\]//g;
	$d =~ s/__attribute__\s*\(\(.*?\)\)//g;
	if ($d =~ /\*/) {
		my ($after) = $d =~ /\*([^*]*)$/;
		return $after =~ /^\s*const\b/;
	}
	return $d =~ /\bconst\b/;
}

for my $file (@files) {
	open(my $fh, "<", $file) or die "$file: $!\n";
	my $s = do { local $/; <$fh> };
	close $fh;
	(my $rel = $file) =~ s{^\Q$dir\E/?}{};
	my @bad;

	# comments and string or character literals out, newlines kept
	$s =~ s{("(?:\\.|[^"\\\n])*")|('(?:\\.|[^'\\\n])*')|(/\*.*?\*/)|(//[^\n]*)}{
		defined $1 ? '""' : defined $2 ? "0" : ("\n" x (($3 // "") =~ tr/\n//))
	}gse;
	# preprocessor lines, with their continuations
	$s =~ s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;

	while ($s =~ /(?<![\w.>])($calls)\s*\(/g) {
		my $line = 1 + (substr($s, 0, pos($s)) =~ tr/\n//);
		push @bad, [$line, "calls $1()"];
	}

	my ($depth, $head, $line) = (0, "", 1);
	my @open;            # per open brace: "init" (an initializer), "type" (a
	                     # file-scope struct/union/enum body), "named" (one
	                     # whose declarators are checked already or name
	                     # types: static, typedef), "other"
	my $after_type = ""; # the kind of a file-scope type body just closed
	for my $c (split //, $s) {
		$line++ if $c eq "\n";
		if ($c ne ";" && $c ne "{" && $c ne "}") {
			$head .= $c;
			next;
		}
		(my $h = $head) =~ s/\s+/ /g;
		$h =~ s/^ //;
		$h =~ s/ $//;
		$head = "";
		if ($c eq "}") {
			my $k = pop @open // "other";
			$depth--;
			$after_type = $depth == 0 && ($k eq "type" || $k eq "named") ? $k : "";
			next;
		}
		if (grep { $_ eq "init" } @open) {
			if ($c eq "{") {
				push @open, "init";
				$depth++;
			}
			next;
		}
		(my $decl = $h) =~ s/=.*//;
		my $static = $decl =~ /^(?:__attribute__\s*\(\(.*?\)\)\s*)?static\b/;
		my $skip = $decl =~ /^(?:typedef|extern|_Static_assert|static_assert)\b/ ||
			   $decl =~ /^static inline\b/ ||
			   $decl =~ /^[^(]*\((?!\s*\*)/;   # a function: its first "(" does
							    # not open "(*name)"
		if ($c eq "{") {
			my $kind = $h =~ /=/ ? "init" : "other";
			if ($kind eq "init") {
				push @bad, [$line, ($static ? "static" : "file-scope") .
					    " variable not const: $decl"]
				    if !$skip && ($static || $depth == 0) && !object_const($decl);
			} elsif ($h =~ /^(?:typedef |static )?(?:const )?(?:struct|union|enum)\b[^()]*$/) {
				if ($static) {   # "static struct { ... } x;"
					push @bad, [$line, "static variable not const: $h {"]
					    unless object_const($decl);
				}
				$kind = $static || $h =~ /^typedef\b/ ? "named" :
					$depth == 0 ? "type" : "other";
			}
			push @open, $kind;
			$depth++;
			$after_type = "";
			next;
		}
		if ($after_type) {       # "} x;" after a file-scope type body
			push @bad, [$line, "file-scope variable: struct ... } $h"]
			    if $after_type eq "type" && $h =~ /\w/ && $h !~ /^__attribute__/ &&
			       !object_const($h);
			$after_type = "";
			next;
		}
		next if $h eq "" || $skip;
		if ($static) {
			push @bad, [$line, "static variable not const: $decl"]
			    unless object_const($decl);
		} elsif ($depth == 0 && $decl !~ /^(?:struct|union|enum) \w+$/) {
			push @bad, [$line, "file-scope variable not const: $decl"]
			    unless object_const($decl);
		}
	}
	print "$rel:$_->[0]: $_->[1]\n" for sort { $a->[0] <=> $b->[0] } @bad;
}
