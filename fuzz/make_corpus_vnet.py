#!/usr/bin/python3
"""Writes the seed corpus of fuzz/fuzz_vnet.c (run once; the output is
committed): a virtio-net header in host byte order (little-endian here), then
the frame. Plain struct packing, so it needs no scapy."""
import os
import struct
import sys

MAC_D, MAC_S = bytes([2, 0, 0, 0, 0, 2]), bytes([2, 0, 0, 0, 0, 1])
SRC, DST = bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2])


def csum_sum(b):
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack(f">{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def vnet(flags=0, gso_type=0, hdr_len=0, gso_size=0, csum_start=0, csum_offset=0):
    return struct.pack("<BBHHHH", flags, gso_type, hdr_len, gso_size, csum_start, csum_offset)


def udp_frame(payload, ident=0x1234, opts=b"", partial=True, tot=None, proto=17):
    ihl = 20 + len(opts)
    ulen = 8 + len(payload)
    ip = struct.pack(">BBHHHBBH4s4s", 0x40 | ihl // 4, 0, tot if tot is not None else (ihl + ulen) & 0xFFFF,
                     ident, 0x4000, 64, proto, 0, SRC, DST) + opts
    ip = ip[:10] + struct.pack(">H", ~csum_sum(ip) & 0xFFFF) + ip[12:]
    pseudo = csum_sum(SRC + DST + struct.pack(">BBH", 0, 17, ulen & 0xFFFF)) if partial else 0
    udp = struct.pack(">HHHH", 5000, 9899, ulen & 0xFFFF, pseudo)
    return MAC_D + MAC_S + b"\x08\x00" + ip + udp + payload


def pattern(n):
    return bytes((i % 251 + (i // 1000) * 37) & 0xFF for i in range(n))


def uso(seg, payload, opts=b"", **kw):
    return vnet(1, 5, 42 + len(opts), seg, 34 + len(opts), 6) + udp_frame(payload, opts=opts, **kw)


arp = MAC_S + MAC_D + b"\x08\x06" + struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + MAC_S + SRC + bytes(6) + DST
seeds = {
    "plain_udp": vnet() + udp_frame(b"hello", partial=False),
    "plain_partial_csum": vnet(1, 0, 0, 0, 34, 6) + udp_frame(pattern(101)),
    "plain_data_valid": vnet(2) + udp_frame(pattern(64), partial=False),
    "plain_arp": vnet() + arp + bytes(60 - len(arp)),
    "uso_3x1000_300": uso(1000, pattern(3300)),
    "uso_exact_3x1000": uso(1000, pattern(3000)),
    "uso_ip_options": uso(1000, pattern(2500), opts=b"\x94\x04\x00\x00"),
    "uso_small_10x10": uso(10, pattern(100)),
    "uso_padding": uso(1000, pattern(2000)) + b"\xee" * 30,
    "uso_iplen_zero": uso(500, pattern(1700), tot=0),
    "uso_64k_44x1472": uso(1472, pattern(44 * 1472)),
    "uso_gso_size_0": uso(0, pattern(300)),
    "uso_tcp": uso(1000, pattern(1500), proto=6),
}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
d = os.path.join(out, "fuzz_vnet")
os.makedirs(d, exist_ok=True)
for name, b in seeds.items():
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(b)
print(f"wrote {len(seeds)} seeds under {d}")
