#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# fake_qmp.py SOCKET [options] - a QMP peer for tests: serves the commands
# kvmscope sends (qmp_capabilities, query-cpus-fast, query-stats-schemas,
# query-stats, query-name) on the unix socket SOCKET, one client after
# another, until killed.
#   --stats N      N statistics in all: N/VCPUS per vCPU, named stat_I
#                  (I from 0), value I + 1000 * vCPU; cumulative
#   --vcpus V      vCPUs (default 2)
#   --name TEXT    what query-name answers (a Python escape string:
#                  "\\x1b]0;x\\x07" is ESC ] 0 ; x BEL)
#   --evil-stat    one more VM statistic whose name is an escape sequence
#   --tag NAME     the VM statistic's name (default vm_stat)
#   --events SECS  after qmp_capabilities, stream an event line every SECS
#                  and answer nothing more
#   --count FILE   write the number of commands answered to FILE
#   --replay F,F.. answer query-cpus-fast, query-stats-schemas and
#                  query-stats from recorded replies (the JSON of
#                  tests/fixtures/qmp/): the Nth client the Nth file (the
#                  last for every client after)
import json, os, socket, sys, time

args = sys.argv[2:]
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
nstats = int(opt("--stats", "4"))
vcpus = int(opt("--vcpus", "2"))
name = opt("--name")
if name is not None:
    name = name.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
events = opt("--events")
count_file = opt("--count")
evil = "--evil-stat" in args
tag = opt("--tag", "vm_stat")
per = max(1, nstats // vcpus)
replay = [json.load(open(f)) for f in opt("--replay").split(",")] if opt("--replay") else None
clients = 0

def stats(target):
    if target == "vm":
        st = [{"name": tag, "value": 7}]
        if evil:
            st.append({"name": "\x1b]0;pwned\x07\x1b[2J", "value": 1})
        return [{"provider": "kvm", "stats": st}]
    return [{"provider": "kvm", "qom-path": "/machine/unattached/device[%d]" % c,
             "stats": [{"name": "stat_%d" % i, "value": i + 1000 * c} for i in range(per)]}
            for c in range(vcpus)]

def schemas():
    return [{"provider": "kvm", "target": "vm", "stats": [{"name": tag, "type": "cumulative", "unit": ""}]},
            {"provider": "kvm", "target": "vcpu",
             "stats": [{"name": "stat_%d" % i, "type": "cumulative", "unit": ""} for i in range(per)]}]

def send(conn, obj):
    # raw bytes, invalid UTF-8 included, as a hostile peer may send them
    conn.sendall((json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape"))

path = sys.argv[1]
try:
    os.unlink(path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(4)
answered = 0
while True:
    conn, _ = srv.accept()
    rec = replay[min(clients, len(replay) - 1)] if replay else None
    clients += 1
    try:
        send(conn, {"QMP": {"version": {"qemu": {"major": 8, "minor": 0, "micro": 0}}, "capabilities": []}})
        f = conn.makefile("rb")
        for line in f:
            cmd = json.loads(line)
            c = cmd.get("execute")
            if c == "qmp_capabilities":
                send(conn, {"return": {}})
                if events:
                    n = 0
                    while True:
                        n += 1
                        send(conn, {"event": "RTC_CHANGE", "data": {"offset": n},
                                    "timestamp": {"seconds": n, "microseconds": 0}})
                        time.sleep(float(events))
            elif rec and c in ("query-cpus-fast", "query-stats-schemas"):
                send(conn, {"return": rec[c]})
            elif rec and c == "query-stats":
                send(conn, {"return": rec[c][cmd["arguments"]["target"]]})
            elif c == "query-cpus-fast":
                r = [{"cpu-index": i, "qom-path": "/machine/unattached/device[%d]" % i} for i in range(vcpus)]
                send(conn, {"return": r})
            elif c == "query-stats-schemas":
                send(conn, {"return": schemas()})
            elif c == "query-stats":
                send(conn, {"return": stats(cmd["arguments"]["target"])})
            elif c == "query-name":
                send(conn, {"return": {"name": name} if name is not None else {}})
            else:
                send(conn, {"error": {"class": "CommandNotFound", "desc": "no"}})
            answered += 1
            if count_file:
                with open(count_file, "w") as cf:
                    cf.write("%d\n" % answered)
    except (OSError, ValueError):
        pass
    conn.close()
