# SPDX-License-Identifier: GPL-2.0-only
# peers.sh - sourced by the tests that start peers (QEMU, Prometheus,
# kvmscope's exporter, fake QMP servers): one way to start each, to wait
# until it is ready, and to stop them all when the test ends.
#
#	peers_start                 # pids=(); on EXIT each is killed and reaped
#	peers_stop                  # ... (for a test's own EXIT trap)
#	free_port                   # a free loopback TCP port
#	wait_socket PATH [PID]      # until the unix socket PATH is there (5 s);
#	                            # 1 if it is not, or PID ended
#	wait_metrics PORT [OUT]     # until 127.0.0.1:PORT/metrics answers (10 s),
#	                            # the scrape in OUT
#	start_exporter LOG ARGS...  # kvmscope exporter on a free loopback port,
#	                            # stderr in LOG; sets EPID, PORT; 1 if it
#	                            # ended or never said its port (10 s)
#	start_prometheus DIR TARGET_PORT INTERVAL [RULES]
#	                            # Debian's prometheus on a free port, data and
#	                            # log in DIR, scraping the target every
#	                            # INTERVAL (also its timeout; RULES: a rule
#	                            # file, evaluated at the same interval); sets
#	                            # PROM_PID, pport, purl; fds 7 and 8 (a
#	                            # test's fifos) closed in it
#	prometheus_tried            # until it tried its target once (30 s): a
#	                            # target started after it is scraped from
#	                            # its start
#	series_of_threads OUT N     # ftrace text of N threads x 16 exit reasons
#	                            # (a replay of 32 N series)
#	stop PID                    # kill and reap one
#
# Uses $KVMSCOPE (or $ks) for the exporter.
peers_stop() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}

peers_start() {
	pids=()
	trap peers_stop EXIT
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

wait_socket() {
	local i
	for i in $(seq 50); do
		[ -S "$1" ] && break
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$1" ] && { [ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null; }
}

wait_metrics() {
	local i
	for i in $(seq 100); do
		curl -sf -o "${2:-/dev/null}" "http://127.0.0.1:$1/metrics" && return 0
		sleep 0.1
	done
	return 1
}

start_exporter() {
	local log=$1 i
	shift
	: > "$log"
	"${ks:-$KVMSCOPE}" exporter --listen 127.0.0.1:0 "$@" 2>"$log" &
	EPID=$!
	pids+=("$EPID")
	PORT=
	for i in $(seq 100); do
		PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$log")
		[ -n "$PORT" ] && return 0
		kill -0 "$EPID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

start_prometheus() {
	local d=$1 target=$2 every=$3 rules=${4:-}
	pport=$(free_port)
	{
		printf 'global:\n  scrape_interval: %s\n  scrape_timeout: %s\n' "$every" "$every"
		[ -z "$rules" ] || printf '  evaluation_interval: %s\nrule_files:\n  - %s\n' "$every" "$rules"
		printf 'scrape_configs:\n  - job_name: kvmscope\n    static_configs:\n'
		printf "      - targets: ['127.0.0.1:%s']\n" "$target"
	} > "$d/prometheus.yml"
	prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/tsdb" \
		--web.listen-address="127.0.0.1:$pport" >"$d/prometheus.log" 2>&1 7>&- 8>&- &
	PROM_PID=$!
	pids+=("$PROM_PID")
	purl="http://127.0.0.1:$pport"
}

prometheus_tried() {
	local i
	for i in $(seq 150); do
		curl -sf "$purl/api/v1/targets" | grep -q '"lastError":"[^"]' && return 0
		sleep 0.2
	done
	return 1
}

series_of_threads() {
	python3 - "$1" "$2" <<'PY'
import sys
reasons = ["EXTERNAL_INTERRUPT", "HLT", "IO_INSTRUCTION", "MSR_READ", "MSR_WRITE", "EPT_VIOLATION",
           "EPT_MISCONFIG", "CPUID", "PAUSE_INSTRUCTION", "PREEMPTION_TIMER", "INTERRUPT_WINDOW",
           "CR_ACCESS", "APIC_WRITE", "EOI_INDUCED", "VMCALL", "EXCEPTION_NMI"]
ts = 1000000
with open(sys.argv[1], "w") as out:
    for r in reasons:
        for t in range(int(sys.argv[2])):
            for ev in ("kvm_exit: reason %s rip 0xffffffff81000010 info 0 0" % r,
                       "kvm_entry: vcpu %d, rip 0xffffffff81000010" % (t % 4)):
                out.write("    CPU 0/KVM-%d [001] %d.%06d: %s\n" % (1000 + t, ts // 1000000, ts % 1000000, ev))
                ts += 1
PY
}
