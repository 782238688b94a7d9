#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# libvirt_peer.py SOCKET MODE - a hostile libvirt daemon on a unix socket,
# for libvirt_hostile_test.sh (the URI qemu+unix:///system?socket=SOCKET).
# It speaks just enough of libvirt's remote protocol (program 0x20008086:
# a 4-byte length, then prog, vers, proc, type, serial, status, XDR) for
# a read-only client to connect, then misbehaves by MODE:
#   silent  accepts connections, reads, never answers (not even the open)
#   hang    answers the open; never answers virConnectGetAllDomainStats
#   evil    answers the statistics with a domain named with terminal
#           escapes, and fields of bad names next to good ones
#   many    answers the statistics with 2 domains of 140 000 each
# Each line on stderr: "conn N open" / "conn N closed" (N: connections
# open now), so the test can count what the client leaves open.
import os, socket, struct, sys, threading

path, mode = sys.argv[1], sys.argv[2]
PROC_AUTH_LIST, PROC_SUPPORTS_FEATURE, PROC_GET_URI, PROC_ALL_STATS = 66, 60, 110, 344
T_INT, T_ULLONG, T_BOOLEAN = 1, 4, 6
lock = threading.Lock()
nconn = 0


def xstr(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def param(field, typ, value):
    v = struct.pack(">Q", value) if typ == T_ULLONG else struct.pack(">i", value)
    return xstr(field) + struct.pack(">i", typ) + v


def record(name, uuid, params):
    return (xstr(name) + uuid + struct.pack(">i", 1) + struct.pack(">I", len(params)) +
            b"".join(params))


def stats_reply():
    if mode == "evil":
        ps = [param("vm.exits.sum", T_ULLONG, 7),
              param("vcpu.0.halt_exits.sum", T_ULLONG, 11),
              param("vm.ex\x1b[2Jits.sum", T_ULLONG, 99),
              param("vm.evil\x1b]0;owned\x07.cur", T_ULLONG, 98),
              param("vcpu.0.blocking.cur", T_BOOLEAN, 1)]
        recs = [record(b"evil\x1b]0;owned\x07\x1b[2J\xff", b"\x01" * 16, ps)]
    else:
        recs = [record("many%d" % d, bytes([d + 1]) * 16,
                       [param("vm.s%d.sum" % i, T_ULLONG, i) for i in range(140000)])
                for d in range(2)]
    return struct.pack(">I", len(recs)) + b"".join(recs)


def serve(c):
    global nconn
    buf = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                return
            buf += d
            while len(buf) >= 4:
                n = struct.unpack(">I", buf[:4])[0]
                if len(buf) < n:
                    break
                msg, buf = buf[:n], buf[n:]
                prog, vers, proc, typ, serial, status = struct.unpack(">6I", msg[4:28])
                if mode == "silent" or (mode == "hang" and proc == PROC_ALL_STATS):
                    continue
                if proc == PROC_AUTH_LIST:
                    body = struct.pack(">II", 1, 0)  # REMOTE_AUTH_NONE
                elif proc == PROC_SUPPORTS_FEATURE:
                    body = struct.pack(">i", 0)
                elif proc == PROC_GET_URI:
                    body = xstr("qemu:///system")
                elif proc == PROC_ALL_STATS:
                    body = STATS
                else:
                    body = b""  # the open, the close
                hdr = struct.pack(">6I", prog, vers, proc, 1, serial, 0)
                c.sendall(struct.pack(">I", 4 + len(hdr) + len(body)) + hdr + body)
    except OSError:
        pass
    finally:
        c.close()
        with lock:
            nconn -= 1
            sys.stderr.write("conn %d closed\n" % nconn)
            sys.stderr.flush()


# made before the socket exists: a reply is sent at once
STATS = stats_reply() if mode in ("evil", "many") else b""
try:
    os.unlink(path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(64)
while True:
    c, _ = srv.accept()
    with lock:
        nconn += 1
        sys.stderr.write("conn %d open\n" % nconn)
        sys.stderr.flush()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
