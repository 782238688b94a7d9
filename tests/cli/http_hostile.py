#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# http_hostile.py PORT SPEC... - hostile HTTP clients of the exporter, held
# open until stdin closes (or SIGTERM).  Each SPEC is KIND:COUNT[@ADDR],
# ADDR the local address the connections come from (default 127.0.0.1;
# any of 127.0.0.0/8 on Linux):
#   nonread   sends "GET /metrics" and never reads the reply (receive buffer
#             at its minimum)
#   slowloris sends half a request head, then one more header line every
#             SLOW seconds (env, default 2), never the blank line
#   idle      connects and sends nothing
# Prints "connected N" once all are connected (refused ones are counted as
# "refused N"), then, at the end, "closed N": how many the server closed.
import os, select, socket, sys, threading, time

port = int(sys.argv[1])
slow = float(os.environ.get("SLOW", "2"))
socks, kinds = [], []
refused = 0
for spec in sys.argv[2:]:
    kind, rest = spec.split(":", 1)
    count, _, addr = rest.partition("@")
    for _ in range(int(count)):
        s = socket.socket()
        if kind == "nonread":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((addr or "127.0.0.1", 0))
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            refused += 1
            s.close()
            continue
        if kind == "nonread":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        elif kind == "slowloris":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
        kinds.append(kind)
print("connected %d refused %d" % (len(socks), refused), flush=True)
closed = set()
stop = threading.Event()

def watch():
    # a connection the server closed reads EOF (or a reset); nonread ones
    # are not read: their closing shows as a failed send
    n = 0
    while not stop.is_set():
        live = [s for s, k in zip(socks, kinds) if s.fileno() not in closed and k != "nonread"]
        r, _, _ = select.select(live, [], [], 0.2) if live else ([], [], time.sleep(0.2))
        for s in r:
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if not d:
                closed.add(s.fileno())
        n += 1
        if n % max(1, int(slow / 0.2)) == 0:
            for s, k in zip(socks, kinds):
                if k == "slowloris" and s.fileno() not in closed:
                    try:
                        s.sendall(b"X-Slow: %d\r\n" % n)
                    except OSError:
                        closed.add(s.fileno())

t = threading.Thread(target=watch, daemon=True)
t.start()
try:
    sys.stdin.read()
except KeyboardInterrupt:
    pass
stop.set()
t.join()
print("closed %d" % len(closed), flush=True)
