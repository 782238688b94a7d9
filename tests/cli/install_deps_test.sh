#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# install_deps_test.sh - scripts/install-deps.sh: the demo set is what
# `make demo` installs and holds no test-only package and no package that
# brings a service; the full set is what `make check` installs; installing
# starts and enables no service.
#
# The install runs against a scratch root (KS_DEPS_ROOT) with apt-get,
# dpkg-query and sudo replaced by fakes on PATH: the fake apt-get does what
# a package's maintainer scripts do (dh_installsystemd's and dh_installinit's
# snippets): asks /usr/sbin/policy-rc.d whether it may start the service,
# as invoke-rc.d and deb-systemd-invoke do, and enables the units
# (symlinks under etc/systemd/system, a start link in etc/rc2.d).
# Oracles: the policy-rc.d the script put in place answered 101 (action
# forbidden) during apt-get install; afterwards the user's own policy-rc.d
# is back byte for byte (also after a failed apt-get), the new enable links
# are gone, an enable link from before is kept.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
deps=$root/scripts/install-deps.sh
t=$KS_TMP/deps
rm -rf "$t"
mkdir -p "$t/bin"

# ---- the sets
demo=$("$deps" --demo --list | sort)
full=$("$deps" --list | sort)
extra=$(comm -23 <(echo "$demo") <(echo "$full"))
# test-only tools and packages that start services when installed (clang
# builds the BPF engine's program, so it is a build package now; the fuzz
# targets' sanitizer runtime, libclang-rt, stays test-only)
bad=$(echo "$demo" | grep -x -E 'prometheus|libvirt-daemon.*|libvirt-clients|chromium.*|qemu-.*|linux-source-.*|trace-cmd|libclang-rt.*|lintian|gdb|tmux|jq|curl' | tr '\n' ' ')
if [ -z "$extra" ] && [ -z "$bad" ] && [ -n "$demo" ] &&
	echo "$full" | grep -qx prometheus && echo "$full" | grep -qx libvirt-daemon-system; then
	echo "ok install_deps_sets ($(echo "$demo" | wc -l) demo packages, $(echo "$full" | wc -l) in all)"
else
	echo "not ok install_deps_sets: demo set has test packages '$bad', not in the full set '$extra'"
fi
# make demo asks for the demo set, make check for everything
d=$(make -C "$root" -n --no-print-directory deps-demo 2>/dev/null)
c=$(make -C "$root" -n --no-print-directory deps 2>/dev/null)
demo_dep=$(sed -n 's/^demo: *//p' "$root/Makefile" | head -1)
check_dep=$(sed -n 's/^check: *//p' "$root/Makefile" | head -1)
if [ "$d" = "scripts/install-deps.sh --demo" ] && [ "$c" = "scripts/install-deps.sh" ] &&
	[ "$demo_dep" = deps-demo ] && [ "$check_dep" = deps ]; then
	echo "ok install_deps_make_targets (make demo: --demo; make check: all)"
else
	echo "not ok install_deps_make_targets: demo needs '$demo_dep' ($d), check needs '$check_dep' ($c)"
fi

# ---- no service started or enabled
cat > "$t/bin/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat > "$t/bin/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
cat > "$t/bin/apt-get" <<'EOF'
#!/bin/bash
# a fake apt-get: "install" runs what maintainer scripts do
[ "$1" = update ] && exit 0
r=$KS_DEPS_ROOT
echo "$*" >> "$r/apt.log"
# invoke-rc.d / deb-systemd-invoke: ask the policy first
if [ -x "$r/usr/sbin/policy-rc.d" ]; then
	"$r/usr/sbin/policy-rc.d" prometheus.service start
	echo "policy $?" >> "$r/apt.log"
else
	echo "policy none" >> "$r/apt.log"
fi
# deb-systemd-helper enable, update-rc.d defaults
mkdir -p "$r/etc/systemd/system/multi-user.target.wants" "$r/etc/systemd/system/sockets.target.wants" "$r/etc/rc2.d"
ln -sf /lib/systemd/system/prometheus.service "$r/etc/systemd/system/multi-user.target.wants/prometheus.service"
ln -sf /lib/systemd/system/libvirtd.socket "$r/etc/systemd/system/sockets.target.wants/libvirtd.socket"
ln -sf /lib/systemd/system/virtlogd.service "$r/etc/systemd/system/virtlogd.service.alias"
ln -sf ../init.d/libvirtd "$r/etc/rc2.d/S01libvirtd"
exit "${FAKE_APT_STATUS:-0}"
EOF
chmod +x "$t/bin"/*

setup_root() { # a root with the user's policy-rc.d and an enabled unit
	rm -rf "$t/root"
	mkdir -p "$t/root/usr/sbin" "$t/root/etc/systemd/system/multi-user.target.wants" "$t/root/etc/rc2.d"
	printf '#!/bin/sh\n# the user'"'"'s own policy\nexit 0\n' > "$t/root/usr/sbin/policy-rc.d"
	chmod 755 "$t/root/usr/sbin/policy-rc.d"
	cp -p "$t/root/usr/sbin/policy-rc.d" "$t/policy.orig"
	ln -s /lib/systemd/system/ssh.service "$t/root/etc/systemd/system/multi-user.target.wants/ssh.service"
	ln -s ../init.d/ssh "$t/root/etc/rc2.d/S01ssh"
}
links() { find "$t/root/etc" -type l | sed "s|^$t/root||" | sort | tr '\n' ' '; }

setup_root
PATH="$t/bin:$PATH" KS_DEPS_ROOT="$t/root" "$deps" --demo > "$t/out" 2>&1
rc=$?
policy=$(sed -n 's/^policy //p' "$t/root/apt.log" 2>/dev/null)
installed=$(sed -n 's/^install -y -qq --no-install-recommends //p' "$t/root/apt.log" 2>/dev/null | tr ' ' '\n' | sort | grep .)
l=$(links)
want_links="/etc/rc2.d/S01ssh /etc/systemd/system/multi-user.target.wants/ssh.service "
if [ "$rc" = 0 ] && [ "$policy" = 101 ] && cmp -s "$t/policy.orig" "$t/root/usr/sbin/policy-rc.d" &&
	[ ! -e "$t/root/usr/sbin/policy-rc.d.kvmscope-saved" ] && [ "$l" = "$want_links" ] &&
	[ "$installed" = "$demo" ]; then
	echo "ok install_deps_no_service (policy-rc.d answered 101 during the install, the user's is back, new enable links removed)"
else
	echo "not ok install_deps_no_service: status $rc, policy-rc.d answered '$policy', links left: $l, policy now: $(tr '\n' ' ' < "$t/root/usr/sbin/policy-rc.d" 2>/dev/null), installed '$(echo $installed)'; $(tail -2 "$t/out" | tr '\n' ' ')"
fi

# apt-get fails: the user's policy-rc.d is still put back; without one,
# none is left behind
setup_root
PATH="$t/bin:$PATH" KS_DEPS_ROOT="$t/root" FAKE_APT_STATUS=100 "$deps" --demo > "$t/out" 2>&1
rc1=$?
same1=no
cmp -s "$t/policy.orig" "$t/root/usr/sbin/policy-rc.d" && same1=yes
setup_root
rm "$t/root/usr/sbin/policy-rc.d"
PATH="$t/bin:$PATH" KS_DEPS_ROOT="$t/root" "$deps" --demo > "$t/out" 2>&1
rc2=$?
policy2=$(sed -n 's/^policy //p' "$t/root/apt.log" 2>/dev/null)
if [ "$rc1" != 0 ] && [ "$same1" = yes ] && [ "$rc2" = 0 ] && [ "$policy2" = 101 ] &&
	[ ! -e "$t/root/usr/sbin/policy-rc.d" ]; then
	echo "ok install_deps_policy_restored (after a failed apt-get; none left where there was none)"
else
	echo "not ok install_deps_policy_restored: failed apt-get: status $rc1, user's policy back: $same1; without one: status $rc2, policy answered '$policy2', left: $(ls "$t/root/usr/sbin")"
fi
