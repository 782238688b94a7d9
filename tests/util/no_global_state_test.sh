#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# no_global_state_test.sh - the library (src/ outside src/cli) keeps no
# process-wide state and does nothing to the whole process: what inputs
# share lives in a library context (include/kvmscope/ctx.h), and what a
# program decides for its process (signal and exit handlers, helper
# processes) stays in the program (src/cli).
#
# Checked twice, so that neither a parser's blind spot nor a build option
# hides a case:
#  - the sources (tests/util/no_global_state.pl): every variable declared
#    static, at file or function scope, and every file-scope variable is
#    const itself (static const tables, "const char *const" pointers); no
#    call of the functions listed below;
#  - the library's objects ($KS_BUILD/obj/src, once built): no object
#    symbol in a writable section (.data, .bss, thread-local data), and
#    none of the functions below among the symbols they use.
# The scanner is first run on a small fixture with each kind of finding.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/src
obj=${KS_BUILD:-$root/build}/obj/src
scanner=$root/tests/util/no_global_state.pl
# functions that act on the whole process
export CALLS='fork|vfork|clone|daemon|system|popen|posix_spawnp?|exec[lv]p?e?|atexit|at_quick_exit|on_exit|pthread_atfork|signal|sigaction|sigprocmask|sigset|bsd_signal|abort|exit|_exit|_Exit|quick_exit|setenv|putenv|unsetenv|clearenv|setlocale|srand|srandom|umask|chdir|setrlimit|pthread_once'

# ---- the scanner, on one case of each kind and what it must let through
fix=${KS_TMP:-/tmp}/no_global_state.$$
mkdir -p "$fix/cli"
cat > "$fix/bad.c" <<'C'
static int counter;
static const char *name = "x";
static struct { int a; } anon;
int global_count = 3;
struct point { int x, y; } origin;
static void (*hook)(void);
static const int *const *ptrs;
static void f(void)
{
	static char buf[16];
	signal(SIGINT, SIG_IGN);
	if (buf[0])
		exit(1);
	atexit(f);
}
C
cat > "$fix/good.c" <<'C'
/* static int in_a_comment; exit(1); */
#define NOPE static int in_a_macro; \
	abort()
struct point { int x, y; };
struct fwd;
typedef struct { int a; } pair_t;
enum color { RED, GREEN };
extern int elsewhere;
static const int table[] = { 1, 2, 3 };
static const char *const names[] = { "a", "b" };
static const struct point corners[2] = { { 0, 0 }, { 1, 1 } };
const char *const exported[] = { "x" };
static inline int twice(int x) { return 2 * x; }
static int g(int a, int b);
_Static_assert(sizeof(int) == 4, "int");
static int g(int a, int b)
{
	static const char msg[] = "exit(1); static int no;";
	struct ops { void (*exit)(void); } o = { 0 };
	int local = a + b;

	if (o.exit)
		o.exit();
	return local + (int)sizeof(msg) + twice(table[0]) + '}';
}
C
echo 'static int in_cli; void g(void) { exit(0); }' > "$fix/cli/main.c"
got=$(perl "$scanner" "$fix" | sed 's/: .*//' | tr '\n' ' ')
want='bad.c:1 bad.c:2 bad.c:3 bad.c:4 bad.c:5 bad.c:6 bad.c:7 bad.c:10 bad.c:11 bad.c:13 bad.c:14 '
if [ "$got" = "$want" ]; then
	echo "ok no_global_state_scanner: each kind found; const tables, types, functions pass"
else
	echo "not ok no_global_state_scanner: findings at '$got', expected '$want'"
	perl "$scanner" "$fix" | sed 's/^/#   /'
fi
rm -rf "$fix"

# ---- the sources
n=$(find "$src" -name '*.[ch]' ! -path "$src/cli/*" | wc -l)
out=$(perl "$scanner" "$src" 2>&1)
if [ "$n" -eq 0 ]; then
	echo "not ok no_global_state_sources: no sources under $src"
elif [ -n "$out" ]; then
	echo "not ok no_global_state_sources: $(echo "$out" | wc -l) finding(s) (the library keeps state in struct ks_ctx):"
	echo "$out" | head -20 | sed 's/^/#   /'
else
	echo "ok no_global_state_sources: $n files, no mutable static or file-scope variable, no process-wide call"
fi

# ---- the objects
objs=$(find "$obj" -name '*.o' ! -path "$obj/cli/*" 2>/dev/null | sort)
if [ -z "$objs" ]; then
	echo "skip no_global_state_objects: no library objects under $obj (make first)"
	exit 0
fi
bad=
for o in $objs; do
	# OBJECT and TLS symbols defined in a writable section (.data.rel.ro is
	# read-only after relocation); the sanitizers' own data is not ours
	w=$(awk 'NR == FNR { if (match($0, /^ *\[ *[0-9]+\] [^ ]+/)) {
			split(substr($0, RSTART, RLENGTH), f, /[][ ]+/); sec[f[2]] = f[3] }
		     next }
		 ($4 == "OBJECT" || $4 == "TLS") && $7 ~ /^[0-9]+$/ {
			s = sec[$7]
			if (s ~ /^\.t?(data|bss)/ && s !~ /^\.data\.rel\.ro/ &&
			    $8 !~ /^_*(asan|ubsan|sancov|odr_asan)/)
				printf "%s %s; ", s, $8
		 }' <(readelf -SW "$o" 2>/dev/null) <(readelf -sW "$o" 2>/dev/null))
	u=$(nm -u "$o" 2>/dev/null | awk '{ print $NF }' | grep -xE "$CALLS" | tr '\n' ' ')
	[ -n "$w" ] && bad+="${o#"$obj"/}: writable: $w"$'\n'
	[ -n "$u" ] && bad+="${o#"$obj"/}: calls: $u"$'\n'
done
if [ -n "$bad" ]; then
	echo "not ok no_global_state_objects: $(printf '%s' "$bad" | wc -l) finding(s):"
	printf '%s' "$bad" | head -20 | sed 's/^/#   /'
else
	echo "ok no_global_state_objects: $(echo "$objs" | wc -l) objects, no writable object symbol, no process-wide call"
fi
