#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""qmp_stats.py - the tests' one QMP client, and QEMU's KVM statistics
(QMP query-stats) as the tests' oracle sees them, one value per statistic
and vCPU.

    connect(path, timeout=30) -> MON: a session on QEMU's QMP socket PATH,
        capabilities negotiated; MON(command, arguments=None) runs one
        command and returns its "return"; MON.close().  A QMP error or a
        connection closed mid-reply raises QmpError.
    stats(mon) -> {"NAME VCPU": (value, target)}   (VCPU -1: the VM's)
    flat(mon) -> {"NAME VCPU": str(value)}, as the tests print it
    top_view(path) -> [(VM row's words, {"NAME VCPU": value shown})]: the
        VMs of `kvmscope top --kvmstats -b -v`'s output PATH, in the keys
        of stats() (a statistic's row is the VM's, its "vcpu N" rows
        below it each vCPU's)

MON may also be libvirt's monitor passthrough (any callable of the same
form).  A histogram (a list) counts as its sum, a boolean as "true"/
"false", as kvmscope reports them.

    qmp_stats.py SOCK CMD...
        QMP commands in order: stats (flat() printed as JSON), stats=FILE
        (query-cpus-fast, query-stats of the VM and of each vCPU and
        query-status as QEMU returns them, written as JSON to FILE),
        sleep:SECS, quit (a connection closed after it is no error), or
        any command without arguments.  A QMP error: exit 1 naming it."""
import json
import socket
import sys
import time


class QmpError(RuntimeError):
    pass


def connect(path, timeout=30):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(path)
    f = s.makefile("rw")
    f.readline()

    def mon(c, a=None):
        m = {"execute": c}
        if a:
            m["arguments"] = a
        f.write(json.dumps(m) + "\n")
        f.flush()
        while True:
            line = f.readline()
            if not line:
                raise QmpError("QMP: connection closed")
            r = json.loads(line)
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise QmpError("QMP error: %s" % r["error"])
    mon.close = s.close
    mon("qmp_capabilities")
    return mon


def stats(mon):
    cpus = {c["qom-path"]: c["cpu-index"] for c in mon("query-cpus-fast")}
    out = {}
    for target in ("vm", "vcpu"):
        for res in mon("query-stats", {"target": target}):
            vcpu = cpus.get(res.get("qom-path"), -1)
            for st in res["stats"]:
                v = st["value"]
                if isinstance(v, list):
                    v = sum(v)
                elif isinstance(v, bool):
                    v = "true" if v else "false"
                out["%s %d" % (st["name"], vcpu)] = (v, target)
    return out


def flat(mon):
    return {k: str(v) for k, (v, _) in stats(mon).items()}


def top_view(path):
    vms, name = [], None
    for line in open(path):
        if not line.strip() or line.startswith("kvmscope top") or line.startswith("VM /"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        f = line.split()
        if depth == 0:
            vms.append((f, {}))
        elif not vms:
            continue
        elif depth == 1:
            name = f[0]
            vms[-1][1]["%s -1" % name] = f[1] if len(f) > 1 else line.strip()
        elif depth == 2 and f[0] == "vcpu":
            vms[-1][1]["%s %s" % (name, f[1])] = f[2]
    return vms


def run(sock, cmds):
    """the commands CMDS in order on SOCK (see the module's text)"""
    try:
        mon = connect(sock)
        for c in cmds:
            if c == "stats":
                print(json.dumps(flat(mon)))
            elif c.startswith("stats="):
                doc = {"cpus": mon("query-cpus-fast"),
                       "vm": mon("query-stats", {"target": "vm"}),
                       "vcpu": mon("query-stats", {"target": "vcpu"}),
                       "status": mon("query-status")}
                with open(c[6:], "w") as out:
                    json.dump(doc, out, indent=1)
            elif c.startswith("sleep:"):
                time.sleep(float(c[6:]))
            elif c == "quit":
                try:
                    mon(c)
                except QmpError:
                    pass
            else:
                mon(c)
    except QmpError as e:
        raise SystemExit(str(e))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(run(sys.argv[1], sys.argv[2:]))
