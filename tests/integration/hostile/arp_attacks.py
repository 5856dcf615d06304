#!/usr/bin/python3
"""Hostile ARP peer for tests/integration/test_hostile_arp.sh (RFC 826 frames,
some of them malformed on purpose). Every mode sends a bounded number of
frames on --iface (the kernel side of the daemon's TAP) and exits.

Modes:
  flood       --count N requests for --target from random senders in
              198.18.1.0-198.19.255.254 with random unicast MACs
  unsolicited --count N replies from --sender-base+i that nobody asked about
  spoof       one unicast reply claiming --spa is at --mac (to --dst-mac)
  garp        one gratuitous ARP (request, spa == tpa == --spa) from --mac
  malformed   short, bad htype/ptype/hlen/plen and bad op frames, --count each
Only addresses in 198.18.0.0/15 are ever used.
"""
import argparse
import ipaddress
import random
import sys
import time

from scapy.all import ARP, Ether, Raw, conf, sendp  # noqa: E402

NET = ipaddress.ip_network("198.18.0.0/15")
BCAST = "ff:ff:ff:ff:ff:ff"


def check(addr):
    if ipaddress.ip_address(addr) not in NET:
        sys.exit(f"refusing {addr}: outside 198.18.0.0/15")
    return addr


def rand_mac(rng):
    b = [rng.randrange(256) for _ in range(6)]
    b[0] = (b[0] & 0xFC) | 0x02  # locally administered unicast
    return ":".join(f"{x:02x}" for x in b)


def rand_sender(rng):
    # Off our /24 (198.18.0.0/24 holds the kernel, the daemon and the
    # test's permanent entry) and never an all-ones host part.
    while True:
        v = rng.randrange(int(ipaddress.ip_address("198.18.1.0")), int(ipaddress.ip_address("198.19.255.255")))
        if v & 0xFF not in (0, 255):
            return str(ipaddress.ip_address(v))


def arp_body(op, hwsrc, psrc, hwdst, pdst, **kw):
    return ARP(op=op, hwsrc=hwsrc, psrc=psrc, hwdst=hwdst, pdst=pdst, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["flood", "unsolicited", "spoof", "garp", "malformed"])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--target", default="198.18.0.2")
    ap.add_argument("--dst-mac", default=BCAST)
    ap.add_argument("--spa", default="198.18.0.1")
    ap.add_argument("--mac", default="02:66:66:66:66:66")
    ap.add_argument("--sender-base", default="198.18.0.100")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=30.0)
    a = ap.parse_args()
    if not 1 <= a.count <= 100000:
        sys.exit("--count must be 1..100000")
    check(a.target)
    check(a.spa)
    check(a.sender_base)
    conf.verb = 0
    rng = random.Random(a.seed)
    frames = []
    if a.mode == "flood":
        for _ in range(a.count):
            mac = rand_mac(rng)
            frames.append(Ether(src=mac, dst=BCAST) / arp_body(1, mac, rand_sender(rng), "00:00:00:00:00:00", a.target))
    elif a.mode == "unsolicited":
        base = int(ipaddress.ip_address(a.sender_base))
        for i in range(a.count):
            mac = rand_mac(rng)
            spa = check(str(ipaddress.ip_address(base + i)))
            frames.append(Ether(src=mac, dst=a.dst_mac) / arp_body(2, mac, spa, a.dst_mac, a.target))
    elif a.mode == "spoof":
        for _ in range(a.count):
            frames.append(Ether(src=a.mac, dst=a.dst_mac) / arp_body(2, a.mac, a.spa, a.dst_mac, a.target))
    elif a.mode == "garp":
        for _ in range(a.count):
            frames.append(Ether(src=a.mac, dst=BCAST) / arp_body(1, a.mac, a.spa, "00:00:00:00:00:00", a.spa))
    elif a.mode == "malformed":
        mac = a.mac
        good = arp_body(1, mac, a.spa, "00:00:00:00:00:00", a.target)
        for _ in range(a.count):
            eth = Ether(src=mac, dst=BCAST, type=0x0806)
            frames += [
                eth / Raw(bytes(good)[:20]),                                  # short (8 bytes missing)
                eth / Raw(bytes(good)[:7]),                                   # very short
                eth / arp_body(1, mac, a.spa, "00:00:00:00:00:00", a.target, hwtype=6),     # htype
                eth / arp_body(1, mac, a.spa, "00:00:00:00:00:00", a.target, ptype=0x86DD),  # ptype
                eth / Raw(bytes(good)[:4] + b"\x08" + bytes(good)[5:]),      # hlen 8
                eth / Raw(bytes(good)[:5] + b"\x10" + bytes(good)[6:]),      # plen 16
                eth / arp_body(9, mac, a.spa, "00:00:00:00:00:00", a.target),  # op 9
                eth / arp_body(0, mac, a.spa, "00:00:00:00:00:00", a.target),  # op 0
            ]
    t0 = time.monotonic()
    # Batches on one socket keep 5000 frames to a few seconds; the deadline
    # bounds the run whatever the peer does.
    for i in range(0, len(frames), 500):
        if time.monotonic() - t0 > a.max_seconds:
            sys.exit(f"time bound hit after {i} frames")
        sendp(frames[i:i + 500], iface=a.iface, verbose=False)
    print(f"{a.mode}: sent {len(frames)} frames in {time.monotonic() - t0:.2f} s")


if __name__ == "__main__":
    main()
