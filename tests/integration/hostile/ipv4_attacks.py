#!/usr/bin/python3
"""Hostile IPv4 peer for tests/integration/test_hostile_ipv4.sh (RFC 791
fragments and headers, many of them malformed on purpose). Each mode sends a
bounded number of frames on --iface (the kernel side of the daemon's TAP)
to --dst at --dst-mac and exits.

Modes:
  fragflood  --count N first fragments (offset 0, MF) of --size payload bytes
             from random sources in 198.19.0.0/16 with random IDs: never
             completed
  overlap    an ICMP echo in 3 fragments, the second overlapping the first
  duplicate  an ICMP echo in 3 fragments, the first sent twice
  tinyodd    an ICMP echo whose first fragment carries 5 bytes (not a
             multiple of 8) with MF set
  tiny1858   an ICMP echo in 8-byte fragments whose offset-8 fragment is
             sent again with other bytes (RFC 1858 overwrite)
  tiny8      an ICMP echo in legal 8-byte fragments (RFC 791 allows them)
  beyond     a fragment at offset 65512 with 100 bytes (ends past 65535)
  badhdr     --count rounds of: IHL 4, IHL 15 beyond the frame, total length
             above the frame, total length below the header, bad checksum,
             version 6 and a 12-byte frame
Only addresses in 198.18.0.0/15 are ever used.
"""
import argparse
import ipaddress
import random
import struct
import sys
import time

from scapy.all import ICMP, IP, Ether, Raw, conf, sendp  # noqa: E402

NET = ipaddress.ip_network("198.18.0.0/15")


def check(addr):
    if ipaddress.ip_address(addr) not in NET:
        sys.exit(f"refusing {addr}: outside 198.18.0.0/15")
    return addr


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def raw_ip(ver=4, ihl=5, tot_len=None, ident=1, frag=0, ttl=64, proto=1, src="198.18.0.1",
           dst="198.18.0.2", payload=b"", fix_csum=True, bad_csum=False):
    """An IPv4 header built by hand, so every field can be wrong."""
    hlen = ihl * 4 if 5 <= ihl else 20
    if tot_len is None:
        tot_len = hlen + len(payload)
    opts = b"\x01" * (hlen - 20)  # NOPs
    h = struct.pack("!BBHHHBBH4s4s", ver << 4 | ihl, 0, tot_len, ident, frag, ttl, proto, 0,
                    ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed) + opts
    c = csum(h) if fix_csum else 0
    if bad_csum:
        c ^= 0x5A5A
    h = h[:10] + struct.pack("!H", c) + h[12:]
    return h + payload


def echo_bytes(ident, seq, n):
    data = bytes((i * 7 + seq) & 0xFF for i in range(n))
    return bytes(ICMP(type=8, id=ident, seq=seq) / Raw(data))


def frag(src, dst, ident, off, data, more, proto=1):
    fl = (0x2000 if more else 0) | (off // 8)
    return raw_ip(ident=ident, frag=fl, proto=proto, src=src, dst=dst, payload=data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["fragflood", "overlap", "duplicate", "tinyodd", "tiny1858",
                                     "tiny8", "beyond", "badhdr"])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst", default="198.18.0.2")
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--src", default="198.18.0.1")
    ap.add_argument("--src-mac", default="02:66:66:66:66:01")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--id", type=int, default=0x4242)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=30.0)
    a = ap.parse_args()
    if not 1 <= a.count <= 100000 or not 8 <= a.size <= 1480 or a.size % 8:
        sys.exit("--count 1..100000, --size a multiple of 8 in 8..1480")
    check(a.dst)
    check(a.src)
    conf.verb = 0
    rng = random.Random(a.seed)
    eth = Ether(src=a.src_mac, dst=a.dst_mac, type=0x0800)
    pkts = []  # IPv4 bytes
    s, d, i = a.src, a.dst, a.id
    if a.mode == "fragflood":
        body = bytes(ICMP(type=8, id=1, seq=1) / Raw(b"\xAA" * (a.size - 8)))
        for _ in range(a.count):
            src = check(str(ipaddress.ip_address(int(ipaddress.ip_address("198.19.0.0")) + rng.randrange(1, 65535))))
            pkts.append(frag(src, d, rng.randrange(65536), 0, body, True))
    elif a.mode in ("overlap", "duplicate"):
        e = echo_bytes(i, 1, 56)  # 64 bytes of ICMP
        if a.mode == "overlap":
            pkts = [frag(s, d, i, 0, e[:24], True), frag(s, d, i, 16, e[16:40], True),
                    frag(s, d, i, 40, e[40:], False)]
        else:
            pkts = [frag(s, d, i, 0, e[:24], True), frag(s, d, i, 0, e[:24], True),
                    frag(s, d, i, 24, e[24:48], True), frag(s, d, i, 48, e[48:], False)]
    elif a.mode == "tinyodd":
        e = echo_bytes(i, 1, 56)
        pkts = [frag(s, d, i, 0, e[:5], True)]
    elif a.mode in ("tiny1858", "tiny8"):
        e = echo_bytes(i, 1, 24)  # 32 bytes of ICMP: 4 fragments of 8
        pkts = [frag(s, d, i, o, e[o:o + 8], o + 8 < len(e)) for o in range(0, len(e), 8)]
        if a.mode == "tiny1858":
            pkts.insert(2, frag(s, d, i, 8, b"\x55" * 8, True))
    elif a.mode == "beyond":
        pkts = [frag(s, d, i, 65512, b"\x00" * 100, False), frag(s, d, i + 1, 65528, b"\x00" * 16, True)]
    elif a.mode == "badhdr":
        e = echo_bytes(i, 1, 8)
        for _ in range(a.count):
            pkts += [
                raw_ip(ihl=4, src=s, dst=d, payload=e),                      # IHL < 5
                raw_ip(ihl=15, src=s, dst=d, payload=b"")[:40],              # IHL beyond the frame
                raw_ip(tot_len=200, src=s, dst=d, payload=e),                # total length > frame
                raw_ip(tot_len=12, src=s, dst=d, payload=e),                 # total length < header
                raw_ip(src=s, dst=d, payload=e, bad_csum=True),              # checksum
                raw_ip(ver=6, src=s, dst=d, payload=e),                      # version
                raw_ip(src=s, dst=d, payload=e)[:12],                        # shorter than a header
            ]
    frames = [eth / Raw(p) for p in pkts]
    t0 = time.monotonic()
    for k in range(0, len(frames), 500):
        if time.monotonic() - t0 > a.max_seconds:
            sys.exit(f"time bound hit after {k} frames")
        sendp(frames[k:k + 500], iface=a.iface, verbose=False)
    print(f"{a.mode}: sent {len(frames)} frames in {time.monotonic() - t0:.2f} s")


if __name__ == "__main__":
    main()
