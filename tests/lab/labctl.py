#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""labctl.py - talk to a lab guest's QMP socket and serial console (tests/lab/).

  labctl.py qmp SOCK COMMAND [JSON-ARGS]     print the "return" value as JSON
  labctl.py console SOCK TEXT EXPECT [SECS]  send TEXT + newline, wait for EXPECT
  labctl.py freeport                         print a free loopback TCP port
  labctl.py slowproxy PORTFILE PORT DELAY K  one connection from 127.0.0.1 (its
            port written to PORTFILE) to 127.0.0.1:PORT; every K-th piece of
            what PORT sends back arrives DELAY seconds late, the rest queues
            behind it (a slow gdbstub, as the client sees it); at the end
            prints the longest stop the client made (0x03 to its c or D, s)
Exit status 0 on success, 1 on error or timeout (message on stderr).
"""
import json
import os
import queue
import socket
import sys
import threading
import time


def qmp(path, command, args=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(path)
    f = s.makefile("rwb")
    json.loads(f.readline())  # greeting
    for cmd in ({"execute": "qmp_capabilities"}, {"execute": command, **({"arguments": args} if args else {})}):
        f.write(json.dumps(cmd).encode() + b"\n")
        f.flush()
        while True:
            msg = json.loads(f.readline())
            if "return" in msg or "error" in msg:
                break
        if "error" in msg:
            raise RuntimeError(msg["error"].get("desc", str(msg)))
    s.close()
    return msg["return"]


def console(path, text, expect, secs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(0.5)
    s.sendall(text.encode() + b"\n")
    buf = b""
    deadline = time.time() + secs
    while time.time() < deadline:
        try:
            data = s.recv(4096)
        except socket.timeout:
            continue
        if not data:
            break
        buf += data
        if expect.encode() in buf:
            s.close()
            return True
    s.close()
    sys.stderr.write("console: no %r within %ss; got %r\n" % (expect, secs, buf[-200:]))
    return False


def slowproxy(portfile, port, delay, every):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(60)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    client, _ = srv.accept()
    stub = socket.create_connection(("127.0.0.1", port), timeout=10)
    stub.settimeout(None)
    for s in (client, stub):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    late = queue.Queue()
    stops = {"at": None, "longest": 0.0}

    def upstream():  # client -> stub, at once; the client's stops timed
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if not data:
                stub.shutdown(socket.SHUT_WR)
                return
            now = time.monotonic()
            if stops["at"] is not None and (b"$c#" in data or b"$D" in data):
                stops["longest"] = max(stops["longest"], now - stops["at"])
                stops["at"] = None
            if b"\x03" in data:
                stops["at"] = now
            stub.sendall(data)

    def deliver():
        while True:
            due, data = late.get()
            if data is None:
                return
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                client.sendall(data)
            except OSError:
                pass

    threading.Thread(target=upstream, daemon=True).start()
    out = threading.Thread(target=deliver)
    out.start()
    n, last = 0, 0.0
    while True:
        try:
            data = stub.recv(65536)
        except OSError:
            data = b""
        if not data:
            break
        n += 1
        last = max(time.monotonic() + (delay if n % every == 0 else 0.0), last)
        late.put((last, data))
    late.put((0, None))
    out.join()
    client.close()
    print("%.3f" % stops["longest"])
    return True


def main():
    a = sys.argv[1:]
    if a and a[0] == "qmp":
        print(json.dumps(qmp(a[1], a[2], json.loads(a[3]) if len(a) > 3 else None)))
        return 0
    if a and a[0] == "console":
        return 0 if console(a[1], a[2], a[3], float(a[4]) if len(a) > 4 else 10) else 1
    if a and a[0] == "slowproxy":
        return 0 if slowproxy(a[1], int(a[2]), float(a[3]), int(a[4])) else 1
    if a and a[0] == "freeport":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # one line, no traceback
        sys.stderr.write("labctl: %s\n" % e)
        sys.exit(1)
