#!/usr/bin/python3
"""Writes the seed corpus for the whole-stack fuzz targets (run once; the
output is committed). Frames match fuzz/fuzz_common.h's set-up."""
import os
import struct
import sys

from scapy.all import ARP, ICMP, IP, UDP, Ether, Raw, fragment

OUR_MAC, PEER_MAC, OTHER = "02:00:00:00:00:02", "02:00:00:00:00:01", "02:00:00:00:00:77"
OUR, PEER, UNRES = "198.18.0.2", "198.18.0.1", "198.18.0.9"
BC = "ff:ff:ff:ff:ff:ff"

frames = {
    "arp_req_for_us": Ether(dst=BC, src=PEER_MAC) / ARP(op=1, hwsrc=PEER_MAC, psrc=PEER, pdst=OUR),
    "arp_req_other": Ether(dst=BC, src=PEER_MAC) / ARP(op=1, hwsrc=PEER_MAC, psrc=PEER, pdst="198.18.0.5"),
    "arp_reply_unres": Ether(dst=OUR_MAC, src=OTHER) / ARP(op=2, hwsrc=OTHER, psrc=UNRES, hwdst=OUR_MAC, pdst=OUR),
    "arp_garp": Ether(dst=BC, src=OTHER) / ARP(op=1, hwsrc=OTHER, psrc=PEER, pdst=PEER),
    "arp_probe_5227": Ether(dst=BC, src=OTHER) / ARP(op=1, hwsrc=OTHER, psrc="0.0.0.0", pdst=OUR),
    "icmp_echo": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR) / ICMP(type=8, id=7, seq=1) / Raw(b"x" * 56),
    "icmp_echo_reply": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR) / ICMP(type=0, id=0x1234, seq=1) / Raw(b"\0" * 56),
    "icmp_frag_needed": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR) / ICMP(type=3, code=4, nexthopmtu=1200)
    / IP(src=OUR, dst="198.18.0.1", proto=17, len=1400) / UDP(sport=9, dport=7),
    "icmp_port_unreach": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR) / ICMP(type=3, code=3)
    / IP(src=OUR, dst=PEER, proto=17) / UDP(sport=9, dport=7),
    "udp_to_bound": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR) / UDP(sport=5000, dport=9) / Raw(b"hello"),
    "udp_closed_port": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR) / UDP(sport=5000, dport=4444) / Raw(b"x"),
    "ip_options": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR, options=[b"\x01\x01\x01\x00"]) / ICMP(type=8) / Raw(b"opt"),
    "ip_unknown_proto": Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR, proto=99) / Raw(b"????"),
}
big = Ether(dst=OUR_MAC, src=PEER_MAC) / IP(src=PEER, dst=OUR, id=77) / ICMP(type=8, id=9, seq=1) / Raw(bytes(range(256)) * 12)
for i, f in enumerate(fragment(big[IP], fragsize=1000)):
    frames[f"frag_{i}"] = Ether(dst=OUR_MAC, src=PEER_MAC) / f

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
single = os.path.join(out, "fuzz_frame")
seq = os.path.join(out, "fuzz_frames")
os.makedirs(single, exist_ok=True)
os.makedirs(seq, exist_ok=True)
for name, f in frames.items():
    with open(os.path.join(single, name), "wb") as fh:
        fh.write(bytes(f))


def record(gap_ms, frame):
    b = bytes(frame)
    return struct.pack(">HH", gap_ms, len(b)) + b


seqs = {
    "resolve_then_echo": [(0, frames["arp_reply_unres"]), (10, frames["icmp_echo"])],
    "fail_resolution": [(4000, frames["icmp_echo"])],
    "frags_in_order": [(0, frames[k]) for k in sorted(frames) if k.startswith("frag_")],
    "frags_timeout": [(0, frames["frag_0"]), (31000, frames["frag_1"])],
    "stale_delay_probe": [(0, frames["arp_req_for_us"]), (6000, frames["udp_to_bound"]), (2000, frames["arp_reply_unres"])],
    "garp_then_locktime": [(0, frames["arp_garp"]), (100, frames["arp_garp"]), (1500, frames["arp_garp"])],
}
for name, recs in seqs.items():
    with open(os.path.join(seq, name), "wb") as fh:
        fh.write(b"".join(record(g, f) for g, f in recs))
print(f"wrote {len(frames)} frames and {len(seqs)} sequences under {out}")
