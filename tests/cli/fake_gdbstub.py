#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""fake_gdbstub.py - a QEMU-like gdbstub on 127.0.0.1 for the sample tests.

    fake_gdbstub.py PORTFILE LOGFILE [--vcpus N] [--delay S]
                    [--slow-from connect|continue] [--slow-every K]
                    [--no-detach-reply]

Serves one connection on an ephemeral loopback port (written to PORTFILE)
and, when the client has gone, writes LOGFILE (JSON): the stops of the
guest as the stub saw them ([start, end, how], times in seconds from the
connection; end null = left stopped; then what let it run, c or D), the
packets received, and protocol
errors (bytes that would have stopped a running QEMU, bad checksums).

Like QEMU's system-mode gdbstub: the guest stops on connect; while it runs,
0x03 stops it and gets a stop reply, and any other byte stops it too,
silently (an error here), except a '+' that acks the packet sent last;
packets are acked as soon as they are complete; 'c' and 'D' let it run.

Slow link: with --delay every byte the stub sends leaves DELAY seconds after
what caused it (all of it with --slow-from connect, from the first 'c' on
with continue), in order; --slow-every K delays only the answer to every
K-th packet (the rest queue behind it).  The stub itself reads and acts at
once, so a stop ends when the client's 'c' arrives.  --no-detach-reply:
'D' gets no answer and the guest stays stopped.

The guest: every vCPU is stopped in func_c (0xffffffff81001010), called by
func_b, called by func_a, with frame pointers on a kernel stack.
"""
import argparse
import json
import queue
import socket
import struct
import threading
import time

TEXT = 0xffffffff81000000
STACK = 0xffffc90000001000
RIP, RBP, RSP = 0xffffffff81001010, STACK + 0xf00, STACK + 0xee0
FRAMES = {STACK + 0xf00: (STACK + 0xf40, 0xffffffff81002010),  # func_b
          STACK + 0xf40: (0, 0xffffffff81003010)}               # func_a


def guest_memory():
    stack = bytearray(0x1000)
    for bp, (nxt, ret) in FRAMES.items():
        struct.pack_into("<QQ", stack, bp - STACK, nxt, ret)
    return [(STACK, bytes(stack)), (TEXT, b"\x90" * 0x10000)]


def regs_hex():
    b = bytearray(608)
    struct.pack_into("<Q", b, 6 * 8, RBP)
    struct.pack_into("<Q", b, 7 * 8, RSP)
    struct.pack_into("<Q", b, 128, RIP)
    struct.pack_into("<I", b, 136, 0x46)     # eflags
    struct.pack_into("<I", b, 140, 0x10)     # cs: kernel
    struct.pack_into("<I", b, 144, 0x18)     # ss
    struct.pack_into("<Q", b, 204, 0x1000)   # cr3
    return b.hex()


def frame(payload):
    return b"$%s#%02x" % (payload, sum(payload) & 0xff)


class Stub:
    def __init__(self, conn, args):
        self.conn, self.a = conn, args
        self.t0 = time.monotonic()
        self.out = queue.Queue()
        self.lock = threading.Lock()
        self.queued = 0  # sends the writer has not done yet
        self.last_due = 0.0
        self.slow = args.slow_from == "connect"
        self.npackets = 0
        self.running = False
        self.last_packet = False  # a packet sent and not acked yet
        self.phys = False
        self.mem = guest_memory()
        self.threads = ["p01.%02x" % (i + 1) for i in range(args.vcpus)]
        self.log = {"holds": [[0.0, None, "connect"]], "packets": [], "errors": []}
        threading.Thread(target=self.writer, daemon=True).start()

    def now(self):
        return time.monotonic() - self.t0

    def send(self, data, delay=None):
        if delay is None:
            delay = self.a.delay if self.slow else 0.0
        now = time.monotonic()
        due = max(now + delay, self.last_due)
        self.last_due = due
        with self.lock:
            if due <= now and not self.queued:  # nothing in front: at once
                self.sendall(data)
                return
            self.queued += 1
        self.out.put((due, data))

    def sendall(self, data):
        try:
            self.conn.sendall(data)
        except OSError:
            pass

    def writer(self):
        while True:
            due, data = self.out.get()
            if data is None:
                return
            time.sleep(max(0.0, due - time.monotonic()))
            with self.lock:
                self.sendall(data)
                self.queued -= 1

    def reply(self, payload, delay=None):
        self.last_packet = True
        self.send(frame(payload), delay)

    def stop(self, how):
        self.running = False
        self.log["holds"].append([self.now(), None, how])

    def run(self, by):
        self.running = True
        self.log["holds"][-1][1] = self.now()
        self.log["holds"][-1].append(by)

    def read_mem(self, addr, n):
        if self.phys:
            return None
        for base, data in self.mem:
            if base <= addr and addr + n <= base + len(data):
                return data[addr - base:addr + n - base]
        return None

    def handle(self, p):
        self.npackets += 1
        self.log["packets"].append([round(self.now(), 4), p.decode(errors="replace")[:40]])
        delay = None
        if self.a.slow_every and self.npackets % self.a.slow_every == 0:
            delay = self.a.delay
        if p.startswith(b"qSupported"):
            self.reply(b"PacketSize=1000;multiprocess+", delay)
        elif p == b"?":
            self.reply(b"T05thread:p01.01;", delay)
        elif p == b"qfThreadInfo":
            self.reply(b"m" + ",".join(self.threads).encode(), delay)
        elif p == b"qsThreadInfo":
            self.reply(b"l", delay)
        elif p.startswith(b"Hg"):
            self.reply(b"OK" if p[2:].decode() in self.threads else b"E22", delay)
        elif p == b"g":
            self.reply(regs_hex().encode(), delay)
        elif p.startswith(b"Qqemu.PhyMemMode:"):
            self.phys = p.endswith(b"1")
            self.reply(b"OK", delay)
        elif p.startswith(b"m"):
            addr, n = (int(x, 16) for x in p[1:].split(b","))
            data = self.read_mem(addr, n)
            self.reply(data.hex().encode() if data else b"E14", delay)
        elif p == b"c":
            self.run("c")
            if self.a.slow_from == "continue":
                self.slow = True
        elif p.startswith(b"D"):
            if self.a.no_detach_reply:  # a stub that never answers: still stopped
                self.log["errors"].append("detach not answered")
                return
            self.reply(b"OK", delay)
            self.run("D")
        elif p[:1] in (b"M", b"X", b"G", b"P"):
            self.log["errors"].append("write packet %r" % p[:12])
            self.reply(b"E01", delay)
        else:
            self.reply(b"", delay)

    def serve(self):
        buf, state, body, csum = b"", "idle", b"", b""
        while True:
            try:
                chunk = self.conn.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            for ch in chunk:
                c = bytes([ch])
                if self.last_packet and state == "idle" and c in (b"+", b"-"):
                    if c == b"-":
                        self.log["errors"].append("nak")
                    self.last_packet = False
                    continue
                if self.running:
                    if c == b"\x03":
                        self.stop("interrupt")
                        self.reply(b"T02thread:p01.01;")
                    else:
                        self.log["errors"].append("byte %r while running at %.3f" % (c, self.now()))
                        self.stop("stray byte")
                    continue
                if state == "idle":
                    if c == b"$":
                        self.last_packet = False
                        state, body = "body", b""
                    elif c not in (b"+", b"\x03"):
                        self.log["errors"].append("garbage %r" % c)
                elif state == "body":
                    if c == b"#":
                        state, csum = "sum", b""
                    else:
                        body += c
                else:
                    csum += c
                    if len(csum) == 2:
                        state = "idle"
                        if int(csum, 16) != sum(body) & 0xff:
                            self.log["errors"].append("bad checksum")
                            self.send(b"-")
                            continue
                        self.send(b"+")
                        self.handle(body)
        self.out.put((0, None))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("portfile")
    ap.add_argument("logfile")
    ap.add_argument("--vcpus", type=int, default=1)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--slow-from", choices=("connect", "continue", "never"), default="never")
    ap.add_argument("--slow-every", type=int, default=0)
    ap.add_argument("--no-detach-reply", action="store_true")
    a = ap.parse_args()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(30)
    with open(a.portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    import os
    os.rename(a.portfile + ".tmp", a.portfile)
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stub = Stub(conn, a)
    stub.serve()
    stub.log["running_at_end"] = stub.running
    with open(a.logfile, "w") as f:
        json.dump(stub.log, f)


if __name__ == "__main__":
    main()
