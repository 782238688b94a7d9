#!/usr/bin/env python3
"""labctl.py - talk to a lab guest's QMP socket and serial console (tests/lab/).

  labctl.py qmp SOCK COMMAND [JSON-ARGS]     print the "return" value as JSON
  labctl.py console SOCK TEXT EXPECT [SECS]  send TEXT + newline, wait for EXPECT
  labctl.py freeport                         print a free loopback TCP port
Exit status 0 on success, 1 on error or timeout (message on stderr).
"""
import json
import socket
import sys
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


def main():
    a = sys.argv[1:]
    if a and a[0] == "qmp":
        print(json.dumps(qmp(a[1], a[2], json.loads(a[3]) if len(a) > 3 else None)))
        return 0
    if a and a[0] == "console":
        return 0 if console(a[1], a[2], a[3], float(a[4]) if len(a) > 4 else 10) else 1
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
