#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tracedat_kallsyms.py - print the kallsyms text stored in a trace.dat v7 file.

Independent oracle for kvmscope's tests: walks the v7 options sections, finds
the KALLSYMS option (id 19), and prints its section (zlib/zstd-less: only
"none" and "zlib" compression are supported here, which is what the test
data uses).  Usage: tracedat_kallsyms.py FILE > kallsyms.txt
"""
import struct
import sys
import zlib


def cstr(buf, pos):
    end = buf.index(b"\0", pos)
    return buf[pos:end].decode(), end + 1


def main(path):
    data = open(path, "rb").read()
    if data[:10] != b"\x17\x08\x44tracing":
        sys.exit("not a trace.dat")
    version, pos = cstr(data, 10)
    if version != "7":
        sys.exit("only version 7 is supported")
    endian = ">" if data[pos] else "<"
    pos += 2 + 4
    comp, pos = cstr(data, pos)
    _compver, pos = cstr(data, pos)
    (opt_off,) = struct.unpack_from(endian + "Q", data, pos)

    def section(off):
        sid, flags, _desc, size = struct.unpack_from(endian + "HHIQ", data, off)
        body = data[off + 16: off + 16 + size]
        if flags & 1:
            csize, _usize = struct.unpack_from(endian + "II", body, 0)
            if comp != "zlib":
                sys.exit("compression %s not supported" % comp)
            body = zlib.decompress(body[8:8 + csize])
        return sid, body

    kallsyms_off = None
    while opt_off:
        _sid, body = section(opt_off)
        opt_off = 0
        p = 0
        while p + 6 <= len(body):
            oid, osize = struct.unpack_from(endian + "HI", body, p)
            odata = body[p + 6: p + 6 + osize]
            p += 6 + osize
            if oid == 19:
                (kallsyms_off,) = struct.unpack_from(endian + "Q", odata, 0)
            if oid == 0:
                (opt_off,) = struct.unpack_from(endian + "Q", odata, 0)
                break
    if kallsyms_off is None:
        sys.exit("no KALLSYMS option")
    _sid, body = section(kallsyms_off)
    (size,) = struct.unpack_from(endian + "I", body, 0)
    sys.stdout.write(body[4:4 + size].decode(errors="replace"))


if __name__ == "__main__":
    main(sys.argv[1])
