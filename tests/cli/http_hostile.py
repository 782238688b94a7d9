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
# Prints "connected N refused M" once all are connected, then, at the end,
# "closed N": how many the server closed (seen as a hang-up, POLLRDHUP,
# even where the reply is not read).  With RENEW=1 in the environment, a
# closed connection is replaced by a new one of its kind (the server is
# kept under COUNT of each), and "renewed N" is printed too.
import os, select, socket, sys, threading, time

port = int(sys.argv[1])
slow = float(os.environ.get("SLOW", "2"))
renew = os.environ.get("RENEW") == "1"
conns = {}  # fd -> (socket, kind, addr)
refused = 0
lock = threading.Lock()

def connect(kind, addr):
    s = socket.socket()
    if kind == "nonread":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((addr, 0))
    try:
        s.connect(("127.0.0.1", port))
        if kind == "nonread":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        elif kind == "slowloris":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        s.close()
        return None
    return s

for spec in sys.argv[2:]:
    kind, rest = spec.split(":", 1)
    count, _, addr = rest.partition("@")
    for _ in range(int(count)):
        s = connect(kind, addr or "127.0.0.1")
        if s is None:
            refused += 1
            continue
        conns[s.fileno()] = (s, kind, addr or "127.0.0.1")
print("connected %d refused %d" % (len(conns), refused), flush=True)
closed = renewed = 0
stop = threading.Event()

def watch():
    global closed, renewed
    n = 0
    last_slow = time.time()
    while not stop.is_set():
        p = select.poll()
        for fd, (s, kind, _) in conns.items():
            p.register(fd, select.POLLRDHUP | (0 if kind == "nonread" else select.POLLIN))
        gone = []
        for fd, ev in p.poll(200):
            s, kind, addr = conns[fd]
            if ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                gone.append(fd)
            elif ev & select.POLLIN:
                try:
                    d = s.recv(65536)
                except OSError:
                    d = b""
                if not d:
                    gone.append(fd)
        if time.time() - last_slow >= slow:
            last_slow = time.time()
            n += 1
            for fd, (s, kind, _) in conns.items():
                if kind == "slowloris" and fd not in gone:
                    try:
                        s.sendall(b"X-Slow: %d\r\n" % n)
                    except OSError:
                        gone.append(fd)
        for fd in set(gone):
            s, kind, addr = conns.pop(fd)
            s.close()
            closed += 1
            if renew:
                ns = connect(kind, addr)
                if ns is not None:
                    conns[ns.fileno()] = (ns, kind, addr)
                    renewed += 1

t = threading.Thread(target=watch, daemon=True)
t.start()
try:
    sys.stdin.read()
except KeyboardInterrupt:
    pass
stop.set()
t.join()
print("closed %d" % closed, flush=True)
if renew:
    print("renewed %d" % renewed, flush=True)
