# SPDX-License-Identifier: GPL-2.0-only
"""qmp_stats.py - QEMU's KVM statistics (QMP query-stats) as the tests'
oracle sees them, one value per statistic and vCPU.

    stats(mon) -> {"NAME VCPU": (value, target)}   (VCPU -1: the VM's)

MON(command, arguments=None) runs one QMP command and returns its
"return" (through a QMP socket, or libvirt's monitor passthrough).  A
histogram (a list) counts as its sum, a boolean as "true"/"false", as
kvmscope reports them."""


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
