#!/usr/bin/env python3
"""Rewrites a Parquet file's FileMetaData.num_rows (field 3) to N, leaving the
row groups alone: a footer whose total disagrees with its row groups, as some
writers produce.  tests/mount/footer_rows.py IN.parquet OUT.parquet N"""
import struct
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while True:
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7


def skip(b, i, t):
    """Index past one compact-protocol value of type t starting at i."""
    if t in (1, 2):  # bool in the field header
        return i
    if t == 3:  # byte
        return i + 1
    if t in (4, 5, 6):  # zigzag varints
        return varint(b, i)[1]
    if t == 7:  # double
        return i + 8
    if t == 8:  # binary
        n, i = varint(b, i)
        return i + n
    if t in (9, 10):  # list, set
        h = b[i]
        i += 1
        n = h >> 4
        if n == 15:
            n, i = varint(b, i)
        for _ in range(n):
            i = skip(b, i, h & 0x0F) if h & 0x0F not in (1, 2) else i + 1
        return i
    if t == 11:  # map
        n, i = varint(b, i)
        if n == 0:
            return i
        kv = b[i]
        i += 1
        for _ in range(n):
            i = skip(b, i, kv >> 4)
            i = skip(b, i, kv & 0x0F)
        return i
    if t == 12:  # struct
        return struct_fields(b, i, None)[0]
    raise ValueError("unknown compact type %d" % t)


def struct_fields(b, i, want):
    """Walks a struct at i; returns (end, (start, end) of field `want`'s value)."""
    fid = 0
    found = None
    while True:
        h = b[i]
        i += 1
        if h == 0:
            return i, found
        t = h & 0x0F
        d = h >> 4
        if d:
            fid += d
        else:
            z, i = varint(b, i)
            fid = (z >> 1) ^ -(z & 1)
        start = i
        i = skip(b, i, t)
        if fid == want:
            if t != 6:
                raise ValueError("num_rows is not an i64")
            found = (start, i)


data = open(sys.argv[1], "rb").read()
n = int(sys.argv[3])
meta_len = struct.unpack("<I", data[-8:-4])[0]
meta_at = len(data) - 8 - meta_len
meta = data[meta_at:len(data) - 8]
_, span = struct_fields(meta, 0, 3)
if span is None:
    raise SystemExit("no num_rows in the footer")
meta = meta[:span[0]] + put_varint((n << 1) ^ (n >> 63)) + meta[span[1]:]
with open(sys.argv[2], "wb") as f:
    f.write(data[:meta_at] + meta + struct.pack("<I", len(meta)) + b"PAR1")
