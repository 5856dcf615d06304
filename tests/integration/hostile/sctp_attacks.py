#!/usr/bin/python3
"""Hostile SCTP peer for tests/integration/test_hostile_sctp.sh (RFC 9260).

Runs inside the test's namespace and plays every peer on the kernel side of
the daemon's TAP through one AF_PACKET socket: it writes Ethernet frames the
daemon reads and reads the frames the daemon writes (to any MAC: the kernel
drops those not for it, the packet socket still sees them). SCTP packets are
built byte by byte (scapy's CRC32c), so every field can lie.

The honest peers live at 198.18.0.10-19 (the script answers the daemon's ARP
requests for them); the INIT flood comes from 198.18.1.0-198.19.255.254,
off-link, so the daemon's INIT ACKs go to its gateway, the kernel, which
drops them (no forwarding). Only addresses in 198.18.0.0/15 are used.

Each phase checks the daemon's exact answers (seen on the wire) and its
counters (`nstack -j stats sctp`, `nstack -j sctp`), prints `measure:` and
`ok:` lines, and exits 1 at the first failed check. The run is bounded by
--max-seconds.
"""
import argparse
import ipaddress
import json
import os
import random
import select
import socket
import struct
import subprocess
import sys
import threading
import time

from scapy.layers.sctp import crc32c

NET = ipaddress.ip_network("198.18.0.0/15")

# Chunk types (RFC 9260 3.2)
DATA, INIT, INIT_ACK, SACK, HB, HB_ACK, ABORT, SHUTDOWN, SHUTDOWN_ACK, ERROR, \
    COOKIE_ECHO, COOKIE_ACK, ECNE, CWR, SHUTDOWN_COMPLETE = range(15)
# Parameter and cause codes
P_STATE_COOKIE, P_UNRECOGNIZED = 7, 8
C_STALE_COOKIE, C_NO_USER_DATA, C_UNRECOGNIZED_CHUNK, C_PROTOCOL_VIOLATION = 3, 9, 6, 13

T0 = time.monotonic()
ARGS = None


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def ok(msg):
    print(f"ok: {msg}", flush=True)


def measure(msg):
    print(f"measure: {msg}", flush=True)


def bounded():
    if time.monotonic() - T0 > ARGS.max_seconds:
        raise Fail(f"time bound of {ARGS.max_seconds} s hit")


def addr_ok(a):
    if ipaddress.ip_address(a) not in NET:
        sys.exit(f"refusing {a}: outside 198.18.0.0/15")
    return a


def mac_bytes(m):
    return bytes(int(x, 16) for x in m.split(":"))


def mac_of(ip):
    """The MAC the script answers ARP with for an honest address."""
    return "02:00:00:00:00:%02x" % ipaddress.ip_address(ip).packed[3]


# ---- Encoding -------------------------------------------------------------


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def chunk(ctype, flags=0, value=b"", length=None):
    """A chunk; length overrides the Length field (the bytes stay as given)."""
    ln = 4 + len(value) if length is None else length
    return pad4(struct.pack("!BBH", ctype, flags, ln) + value)


def tlv(ptype, value):
    return pad4(struct.pack("!HH", ptype, 4 + len(value)) + value)


def sctp(sport, dport, vtag, chunks, bad_csum=False):
    h = struct.pack("!HHII", sport, dport, vtag, 0)
    crc = crc32c(h + chunks)
    if bad_csum:
        crc ^= 0x1
    return h[:8] + struct.pack(">I", crc) + chunks


def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, payload, proto=132, ident=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0x4000, 64, proto, 0,
                    ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed)
    h = h[:10] + struct.pack("!H", csum16(h)) + h[12:]
    return h + payload


def init_value(tag, a_rwnd, os_, mis, tsn, params=b""):
    return struct.pack("!IIHHI", tag, a_rwnd, os_, mis, tsn) + params


def data_value(tsn, sid, ssn, ppid, payload):
    return struct.pack("!IHHI", tsn, sid, ssn, ppid) + payload


def sack_value(cum, a_rwnd, gaps=(), dups=(), ngaps=None, ndups=None):
    ng = len(gaps) if ngaps is None else ngaps
    nd = len(dups) if ndups is None else ndups
    v = struct.pack("!IIHH", cum, a_rwnd, ng, nd)
    v += b"".join(struct.pack("!HH", s, e) for s, e in gaps)
    v += b"".join(struct.pack("!I", d) for d in dups)
    return v


def hb_value(info=b"hostile-heartbeat"):
    return tlv(1, info)


# ---- Decoding -------------------------------------------------------------


class Pkt:
    """An SCTP packet the daemon sent."""

    def __init__(self, src, dst, b):
        self.src, self.dst = src, dst
        self.sport, self.dport, self.vtag = struct.unpack("!HHI", b[:8])
        self.chunks = []  # (type, flags, value)
        off = 12
        while off + 4 <= len(b):
            t, f, ln = struct.unpack("!BBH", b[off:off + 4])
            if ln < 4:
                break
            self.chunks.append((t, f, b[off + 4:off + ln]))
            off += ln + (-ln % 4)

    def types(self):
        return [c[0] for c in self.chunks]

    def first(self, t):
        for c in self.chunks:
            if c[0] == t:
                return c
        return None

    def __repr__(self):
        return f"<{self.src}:{self.sport}->{self.dst}:{self.dport} tag {self.vtag:#x} {self.types()}>"


def tlvs(b):
    out, off = [], 0
    while off + 4 <= len(b):
        t, ln = struct.unpack("!HH", b[off:off + 4])
        if ln < 4:
            break
        out.append((t, b[off + 4:off + ln]))
        off += ln + (-ln % 4)
    return out


def causes(v):
    return [c for c, _ in tlvs(v)]


# ---- The wire ---------------------------------------------------------------


class Wire:
    def __init__(self, iface, dmac, kmac, daemon_ip):
        self.iface, self.dmac, self.kmac, self.dip = iface, dmac, kmac, daemon_ip
        self.dmac_b = mac_bytes(dmac)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        self.s.bind((iface, 0))
        self.s.setblocking(False)
        self.honest = set()  # addresses whose ARP requests get answered
        self.backlog = []
        self.handlers = []  # callables(pkt) -> True if consumed

    def frame(self, src_ip, payload_ip, src_mac=None):
        sm = src_mac or (mac_of(src_ip) if src_ip in self.honest else self.kmac)
        return self.dmac_b + mac_bytes(sm) + b"\x08\x00" + payload_ip

    def send_sctp(self, src, sport, dport, vtag, chunks, bad_csum=False, raw=None):
        body = raw if raw is not None else sctp(sport, dport, vtag, chunks, bad_csum)
        self.s.send(self.frame(src, ipv4(src, self.dip, body)))

    def _read_one(self):
        try:
            f = self.s.recv(65536)
        except BlockingIOError:
            return None
        if len(f) < 14 or f[6:12] != self.dmac_b:
            return False
        et = struct.unpack("!H", f[12:14])[0]
        if et == 0x0806 and len(f) >= 42:
            op = struct.unpack("!H", f[20:22])[0]
            tpa = str(ipaddress.ip_address(f[38:42]))
            if op == 1 and tpa in self.honest:
                m = mac_bytes(mac_of(tpa))
                rep = (f[6:12] + m + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + m +
                       f[38:42] + f[22:28] + f[28:32])
                self.s.send(rep)
            return False
        if et != 0x0800 or len(f) < 34 or f[23] != 132:
            return False
        ihl = (f[14] & 0xF) * 4
        tot = struct.unpack("!H", f[16:18])[0]
        src = str(ipaddress.ip_address(f[26:30]))
        dst = str(ipaddress.ip_address(f[30:34]))
        return Pkt(src, dst, f[14 + ihl:14 + tot])

    def poll(self, timeout):
        """Read what arrives within timeout; honest-peer handlers first."""
        end = time.monotonic() + timeout
        got = []
        while True:
            p = self._read_one()
            if p is None:
                left = end - time.monotonic()
                if left <= 0:
                    return got
                select.select([self.s], [], [], left)
                continue
            if p is False:
                continue
            if any(h(p) for h in self.handlers):
                continue
            got.append(p)

    def expect(self, pred, timeout=1.0):
        """Packets until one satisfies pred (returned last) or timeout."""
        end = time.monotonic() + timeout
        got = []
        while time.monotonic() < end:
            for p in self.poll(min(0.05, max(0.0, end - time.monotonic()))):
                got.append(p)
                if pred(p):
                    return got, p
        return got, None

    def drain(self, t=0.05):
        return self.poll(t)


# ---- The daemon's view ------------------------------------------------------


def nst(*args):
    for _ in range(40):
        try:
            out = subprocess.run([ARGS.nstack, "-C", ARGS.ctl, *args], capture_output=True,
                                 text=True, timeout=10)
            break
        except OSError:  # the binary being relinked by a concurrent build
            time.sleep(0.25)
    else:
        raise Fail(f"cannot run {ARGS.nstack}")
    if out.returncode != 0:
        raise Fail(f"nstack {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def stats():
    return json.loads(nst("-j", "stats", "sctp"))["sctp"]


def assocs():
    out = nst("-j", "sctp").strip()
    return json.loads(out) if out else []


def assoc_of(peer_port):
    for a in assocs():
        if a["peer_port"] == peer_port:
            return a
    return None


def tap_drops(iface):
    """Frames the kernel dropped on the way to the daemon (TAP queue full)."""
    with open(f"/sys/class/net/{iface}/statistics/tx_dropped") as f:
        return int(f.read())


def rss_kb():
    with open(f"/proc/{ARGS.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Fail("no VmRSS")


def alive(what):
    try:
        os.kill(ARGS.pid, 0)
    except OSError:
        raise Fail(f"daemon died ({what})")


class Delta:
    """Counter deltas: the "after" snapshot is taken at the first use and
    kept until take() (each snapshot runs the CLI, which is slow under
    ASan)."""

    def __init__(self):
        self.before = stats()
        self.after = None

    def take(self):
        self.after = stats()
        return self

    def __call__(self, name):
        if self.after is None:
            self.take()
        return self.after[name] - self.before[name]

    def all(self):
        if self.after is None:
            self.take()
        return {k: self.after[k] - v for k, v in self.before.items() if self.after[k] != v}


# ---- An honest peer (it also lies on demand) --------------------------------


class Peer:
    def __init__(self, w, addr, dport, sport=None, a_rwnd=1 << 20, rng=None):
        self.w, self.addr, self.dport = w, addr_ok(addr), dport
        self.rng = rng or random.Random()
        self.sport = sport or self.rng.randrange(20000, 60000)
        self.my_tag = self.rng.randrange(1, 1 << 32)
        self.my_tsn = self.rng.randrange(1 << 32)
        self.next_tsn = self.my_tsn
        self.ssn = {}  # next SSN per stream
        self.a_rwnd = a_rwnd
        self.peer_tag = None
        self.peer_cum = None  # highest in-order TSN received from the daemon
        self.received = {}  # tsn -> payload
        self.auto_sack = True
        self.sack_rwnd = None  # a_rwnd in our SACKs (None: self.a_rwnd)
        self.sack_ack = True  # False: our SACKs never acknowledge anything
        self.data_pkts = 0
        self.w.honest.add(addr)
        self.w.handlers.append(self.handle)

    def close(self):
        if self.handle in self.w.handlers:
            self.w.handlers.remove(self.handle)

    def send(self, chunks, vtag=None, **kw):
        self.w.send_sctp(self.addr, self.sport, self.dport,
                         self.peer_tag if vtag is None else vtag, chunks, **kw)

    def init_chunk(self, params=b""):
        return chunk(INIT, 0, init_value(self.my_tag, self.a_rwnd, 10, 10, self.my_tsn, params))

    def mine(self, p):
        return p.src == self.w.dip and p.dst == self.addr and p.sport == self.dport and \
            p.dport == self.sport

    def handle(self, p):
        """Consume DATA and HEARTBEATs of an established association."""
        if self.peer_tag is None or not self.mine(p) or p.vtag != self.my_tag:
            return False
        ts = p.types()
        if DATA not in ts and HB not in ts:
            return False
        out = b""
        for t, _, v in p.chunks:
            if t == HB:
                out += chunk(HB_ACK, 0, v)
            elif t == DATA and len(v) >= 12:
                tsn = struct.unpack("!I", v[:4])[0]
                self.received.setdefault(tsn, v[12:])
        if DATA in ts:
            self.data_pkts += 1
            if self.sack_ack:
                while ((self.peer_cum + 1) & 0xFFFFFFFF) in self.received:
                    self.peer_cum = (self.peer_cum + 1) & 0xFFFFFFFF
            if self.auto_sack:
                rw = self.a_rwnd if self.sack_rwnd is None else self.sack_rwnd
                out += chunk(SACK, 0, sack_value(self.peer_cum, rw))
        if out:
            self.send(out)
        # Other chunks bundled with them (SACK, ERROR...) still matter.
        return all(t in (DATA, HB) for t in ts)

    def connect(self, init_params=b"", timeout=2.0):
        ia = self.init_ack(init_params, timeout)
        return self.echo_cookie(ia)

    def init_ack(self, init_params=b"", timeout=2.0):
        self.w.drain(0)
        self.send(self.init_chunk(init_params), vtag=0)
        _, p = self.w.expect(lambda q: self.mine(q) and INIT_ACK in q.types(), timeout)
        check(p is not None, f"no INIT ACK for {self.addr}:{self.sport}")
        check(p.vtag == self.my_tag, "INIT ACK with a wrong tag")
        v = p.first(INIT_ACK)[2]
        tag, rwnd, os_, mis, itsn = struct.unpack("!IIHHI", v[:16])
        params = tlvs(v[16:])
        cookie = [pv for pt, pv in params if pt == P_STATE_COOKIE]
        check(len(cookie) == 1, "INIT ACK without exactly one State Cookie")
        return {"tag": tag, "itsn": itsn, "cookie": cookie[0], "params": params, "pkt": p}

    def echo_cookie(self, ia, cookie=None, vtag=None, timeout=2.0):
        self.w.drain(0)
        ck = ia["cookie"] if cookie is None else cookie
        self.send(chunk(COOKIE_ECHO, 0, ck), vtag=ia["tag"] if vtag is None else vtag)
        _, p = self.w.expect(lambda q: self.mine(q) and COOKIE_ACK in q.types(), timeout)
        check(p is not None, f"no COOKIE ACK for {self.addr}:{self.sport}")
        check(p.vtag == self.my_tag, "COOKIE ACK with a wrong tag")
        self.peer_tag = ia["tag"]
        self.peer_itsn = ia["itsn"]
        self.peer_cum = (ia["itsn"] - 1) & 0xFFFFFFFF
        return p

    def data(self, payload, sid=0, ppid=0, tsn=None, flags=3):
        """The next DATA chunk; with tsn given, a forged one that uses up
        neither a TSN nor an SSN."""
        ssn = self.ssn.get(sid, 0)
        if tsn is None:
            tsn = self.next_tsn
            self.next_tsn = (self.next_tsn + 1) & 0xFFFFFFFF
            self.ssn[sid] = (ssn + 1) & 0xFFFF
        return chunk(DATA, flags, data_value(tsn, sid, ssn, ppid, payload))

    def last_tsn(self):
        return (self.next_tsn - 1) & 0xFFFFFFFF

    def sack_for(self, q):
        if not (self.mine(q) and SACK in q.types()):
            return False
        return struct.unpack("!I", q.first(SACK)[2][:4])[0] == self.last_tsn()

    def exchange(self, payload=b"hello", timeout=2.0):
        """DATA out, the SACK acknowledging it back."""
        self.send(self.data(payload))
        _, p = self.w.expect(self.sack_for, timeout)
        check(p is not None, f"no SACK for TSN {self.last_tsn()} ({self.addr}:{self.sport})")
        return p

    def abort(self):
        if self.peer_tag is not None:
            self.send(chunk(ABORT))
        self.close()

    def sctp_info(self):
        return assoc_of(self.sport)


# ---- Phases -------------------------------------------------------------------


def flood_sources(rng, n):
    lo = int(ipaddress.ip_address("198.18.1.0"))
    hi = int(ipaddress.ip_address("198.19.255.254"))
    return [str(ipaddress.ip_address(rng.randrange(lo, hi + 1))) for _ in range(n)]


def phase_flood(w, rng):
    n = ARGS.flood
    srcs = flood_sources(rng, n)
    frames = []
    for s in srcs:
        addr_ok(s)
        v = init_value(rng.randrange(1, 1 << 32), 65536, 10, 10, rng.randrange(1 << 32))
        body = sctp(rng.randrange(1024, 65536), ARGS.discard, 0, chunk(INIT, 0, v))
        frames.append(w.frame(s, ipv4(s, w.dip, body), src_mac=w.kmac))
    d = Delta()
    rss0 = rss_kb()
    drops0 = tap_drops(w.iface)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((w.iface, 0))
    t_start = time.monotonic()

    def blast():
        # Paced at about 2500 INITs/s, what the ASan build takes in: the rest
        # would only overflow the TAP's queue in the kernel (tx_dropped).
        for k, f in enumerate(frames):
            tx.send(f)
            if k % 50 == 49:
                time.sleep(0.02)
        bounded()

    th = threading.Thread(target=blast)
    th.start()
    # An honest association forms while the flood runs.
    during = Peer(w, "198.18.0.10", ARGS.discard, rng=rng)
    during.connect(timeout=5.0)
    during.exchange(b"during the flood", timeout=5.0)
    mid = th.is_alive()
    th.join()
    t_flood = time.monotonic() - t_start
    time.sleep(0.5)
    w.drain()
    alive("flood")
    rss1 = rss_kb()
    inits, acks = d("rx_init"), d("tx_init_ack")
    lost = tap_drops(w.iface) - drops0
    others = [a for a in assocs() if not a["peer_addr"].startswith("198.18.0.")]
    n_all = len(assocs())
    measure(f"flood: {n} INITs from {len(set(srcs))} addresses in {t_flood:.2f} s; "
            f"rx_init +{inits} tx_init_ack +{acks} passive_opens +{d('passive_opens')}; "
            f"dropped by the kernel's TAP queue {lost}; "
            f"associations from flood sources {len(others)}, all {n_all}; "
            f"honest handshake completed {'during' if mid else 'around'} the flood; "
            f"rss {rss0} -> {rss1} kB (+{rss1 - rss0})")
    check(inits + lost == n + 1, f"rx_init +{inits} + {lost} TAP drops, expected {n + 1}")
    check(inits >= n * 9 // 10, f"only {inits} of {n} INITs reached the daemon")
    check(acks == inits, f"tx_init_ack +{acks}, rx_init +{inits}")
    check(d("passive_opens") == 1, "a flood INIT created an association")
    check(not others and n_all == 1, f"{len(others)} associations from flood sources")
    check(mid, "the flood ended before the honest handshake did")
    ok(f"INIT flood: {acks} stateless INIT ACKs, no association but the honest one")
    after = Peer(w, "198.18.0.11", ARGS.discard, rng=rng)
    after.connect()
    after.exchange(b"after the flood")
    during.exchange(b"still there")
    ok("honest associations formed during and after the flood")
    # The same flood again: warm-up (pools, ASan's quarantine filling) is
    # done, so anything kept per INIT would show here.
    d2 = Delta()
    rss2 = rss_kb()
    blast()
    time.sleep(0.5)
    w.drain()
    alive("second flood")
    rss3 = rss_kb()
    measure(f"second flood of {n} INITs: rx_init +{d2('rx_init')} tx_init_ack +{d2('tx_init_ack')} "
            f"passive_opens +{d2('passive_opens')}; rss {rss2} -> {rss3} kB (+{rss3 - rss2})")
    check(d2("passive_opens") == 0 and d2("tx_init_ack") == d2("rx_init"), "second flood")
    # 200 bytes kept per INIT would be 1000 kB.
    check(rss3 - rss2 < 1000, f"RSS grew by {rss3 - rss2} kB over a second flood")
    ok(f"second flood: RSS +{rss3 - rss2} kB")
    during.abort()
    after.abort()
    tx.close()
    return rss1 - rss0


def phase_cookies(w, rng):
    p = Peer(w, "198.18.0.12", ARGS.discard, rng=rng)
    d = Delta()
    ia = p.init_ack()
    ck = ia["cookie"]
    forged = {
        "bad MAC": (ck[:-1] + bytes([ck[-1] ^ 0x80]), ia["tag"]),
        "truncated": (ck[:len(ck) // 2], ia["tag"]),
        "empty": (b"", ia["tag"]),
        "wrong tag": (ck, ia["tag"] ^ 0x5A5A5A5A),
        "garbage": (bytes(rng.randrange(256) for _ in range(len(ck))), ia["tag"]),
    }
    for name, (c, tag) in forged.items():
        w.drain(0)
        p.send(chunk(COOKIE_ECHO, 0, c), vtag=tag)
        got = w.poll(0.3)
        mine = [q for q in got if p.mine(q)]
        check(not mine, f"forged cookie ({name}) answered: {mine}")
    n = len(forged)
    bad = d("cookie_bad")
    measure(f"forged COOKIE ECHOs ({', '.join(forged)}): cookie_bad +{bad}, "
            f"passive_opens +{d('passive_opens')}, nothing sent back")
    check(bad == n, f"cookie_bad +{bad}, expected {n}")
    check(d("passive_opens") == 0 and assoc_of(p.sport) is None, "a forged cookie made an association")
    # The same (genuine) cookie from another port is not ours for that port.
    q = Peer(w, "198.18.0.12", ARGS.discard, rng=rng)
    q.send(chunk(COOKIE_ECHO, 0, ck), vtag=ia["tag"])
    got = [x for x in w.poll(0.3) if q.mine(x)]
    check(not got and d.take()("cookie_bad") == n + 1, "a cookie replayed from another port was accepted")
    q.close()
    ok("forged cookies (bad MAC, truncated, empty, wrong tag, random, other port) silently discarded")
    # Expired: a genuine cookie echoed after valid_cookie_life (1 s here).
    old = p.init_ack()
    time.sleep(ARGS.cookie_life + 0.3)
    w.drain(0)
    p.send(chunk(COOKIE_ECHO, 0, old["cookie"]), vtag=old["tag"])
    got, e = w.expect(lambda x: p.mine(x) and ERROR in x.types(), 1.0)
    check(e is not None, "no ERROR for a stale cookie")
    cs = tlvs(e.first(ERROR)[2])
    stale_us = struct.unpack("!I", cs[0][1][:4])[0] if cs and len(cs[0][1]) >= 4 else -1
    measure(f"stale cookie after {ARGS.cookie_life + 0.3:.1f} s: ERROR tag {e.vtag:#x} "
            f"(our INIT tag {p.my_tag:#x}) causes {[c for c, _ in cs]} staleness {stale_us} us; "
            f"cookie_stale +{d.take()('cookie_stale')}")
    check(e.vtag == p.my_tag and [c for c, _ in cs] == [C_STALE_COOKIE], "stale cookie ERROR wrong")
    check(d("cookie_stale") == 1 and d("passive_opens") == 0, "stale cookie counters")
    check(e.types() == [ERROR], f"stale cookie answer carries {e.types()}")
    ok("expired cookie answered with one Stale Cookie ERROR, no association")
    # A fresh genuine cookie still works.
    p.connect()
    p.exchange(b"genuine")
    check(d.take()("passive_opens") == 1, "passive_opens after the genuine cookie")
    ok("a genuine cookie still opens the association")
    return p


def phase_vtags(w, rng, p):
    """p: an established association (discard)."""
    d = Delta()
    bad = p.my_tag ^ 0x01010101
    if bad == p.peer_tag:
        bad ^= 2
    cases = [
        ("ABORT wrong tag", chunk(ABORT), bad),
        ("ABORT T-bit with the daemon's own tag", chunk(ABORT, 1), p.peer_tag),
        ("ABORT T-bit, our tag not reflected", chunk(ABORT, 1), p.my_tag ^ 0x200),
        ("SHUTDOWN wrong tag", chunk(SHUTDOWN, 0, struct.pack("!I", p.peer_cum)), bad),
        ("SHUTDOWN zero tag", chunk(SHUTDOWN, 0, struct.pack("!I", p.peer_cum)), 0),
        ("DATA wrong tag", p.data(b"never", tsn=p.next_tsn), bad),
        ("SHUTDOWN COMPLETE wrong tag", chunk(SHUTDOWN_COMPLETE), bad),
    ]
    for name, c, tag in cases:
        w.drain(0)
        p.send(c, vtag=tag)
        got = [x for x in w.poll(0.25) if p.mine(x)]
        check(not got, f"{name}: answered {got}")
    info = p.sctp_info()
    check(info and info["state"] == "ESTABLISHED", f"association now {info and info['state']}")
    measure(f"wrong-tag ABORT/SHUTDOWN/DATA/SHUTDOWN COMPLETE ({len(cases)} packets): "
            f"rx_bad_vtag +{d('rx_bad_vtag')}, association drop_bad_vtag "
            f"{info['counters']['drop_bad_vtag']}, state {info['state']}, aborts_rx +{d('aborts_rx')}")
    check(d("rx_bad_vtag") == len(cases) and d("aborts_rx") == 0, "vtag counters")
    p.exchange(b"after the wrong tags")
    ok("wrong-tag ABORT, SHUTDOWN, DATA and SHUTDOWN COMPLETE ignored, association intact")
    # T bit with the reflected tag (ours, as the daemon knows it): accepted.
    d = Delta()
    p.send(chunk(ABORT, 1), vtag=p.my_tag)
    time.sleep(0.2)
    check(d("aborts_rx") == 1, "a reflected-tag ABORT with T set was not taken")
    info = p.sctp_info()
    check(info is None or info["state"] == "CLOSED", "association survived a valid ABORT")
    p.close()
    ok("ABORT with the T bit and the reflected tag ends the association (8.5.1 B)")


def phase_ootb(w, rng):
    """RFC 9260 8.4: packets for no association, from 198.18.0.13."""
    src = "198.18.0.13"
    w.honest.add(src)
    sport = rng.randrange(20000, 60000)
    tag = rng.randrange(1, 1 << 32)
    cases = [  # name, chunks, expected answer: None or (type, T bit)
        ("DATA", chunk(DATA, 3, data_value(1, 0, 0, 0, b"ootb")), (ABORT, 1)),
        ("SACK", chunk(SACK, 0, sack_value(5, 1000)), (ABORT, 1)),
        ("HEARTBEAT", chunk(HB, 0, hb_value()), (ABORT, 1)),
        ("SHUTDOWN", chunk(SHUTDOWN, 0, struct.pack("!I", 7)), (ABORT, 1)),
        ("ERROR (invalid stream)", chunk(ERROR, 0, tlv(1, b"\0\1\0\0")), (ABORT, 1)),
        ("unknown type 0x3e", chunk(0x3E, 0, b"\0" * 4), (ABORT, 1)),
        ("ABORT", chunk(ABORT), None),
        ("ABORT with T", chunk(ABORT, 1), None),
        ("SHUTDOWN COMPLETE", chunk(SHUTDOWN_COMPLETE), None),
        ("COOKIE ACK", chunk(COOKIE_ACK), None),
        ("ERROR stale cookie", chunk(ERROR, 0, tlv(C_STALE_COOKIE, b"\0\0\0\1")), None),
        ("DATA then ABORT", chunk(DATA, 3, data_value(1, 0, 0, 0, b"x")) + chunk(ABORT), None),
        ("SHUTDOWN ACK", chunk(SHUTDOWN_ACK), (SHUTDOWN_COMPLETE, 1)),
    ]
    d = Delta()
    seen = []
    for name, c, want in cases:
        w.drain(0)
        w.send_sctp(src, sport, ARGS.discard, tag, c)
        got = [x for x in w.poll(0.25) if x.dst == src and x.dport == sport]
        if want is None:
            check(not got, f"OOTB {name}: answered {got}")
            seen.append(f"{name}: none")
            continue
        check(len(got) == 1, f"OOTB {name}: {len(got)} answers {got}")
        x = got[0]
        check(len(x.chunks) == 1, f"OOTB {name}: answer {x}")
        t, f, _ = x.chunks[0]
        check((t, f & 1) == want and x.vtag == tag and x.sport == ARGS.discard,
              f"OOTB {name}: got type {t} flags {f} tag {x.vtag:#x}, want {want} tag {tag:#x}")
        seen.append(f"{name}: {'ABORT' if t == ABORT else 'SHUTDOWN COMPLETE'}(T)")
    # INIT to a port nobody listens on: ABORT with the INIT's tag, T clear.
    w.drain(0)
    it = rng.randrange(1, 1 << 32)
    w.send_sctp(src, sport, ARGS.closed_port, 0, chunk(INIT, 0, init_value(it, 65536, 1, 1, 9)))
    got = [x for x in w.poll(0.25) if x.dst == src and x.dport == sport]
    check(len(got) == 1 and got[0].types() == [ABORT] and got[0].vtag == it and
          got[0].chunks[0][1] & 1 == 0, f"INIT to a closed port: {got}")
    seen.append("INIT to a closed port: ABORT(init tag, T clear)")
    # A bad checksum gets nothing at all.
    w.send_sctp(src, sport, ARGS.discard, tag, chunk(DATA, 3, data_value(1, 0, 0, 0, b"x")),
                bad_csum=True)
    got = [x for x in w.poll(0.25) if x.dst == src]
    check(not got, "bad checksum answered")
    seen.append("bad CRC32c: none")
    measure("OOTB: " + "; ".join(seen) + f"; counters {d.all()}")
    check(d("rx_bad_csum") == 1, "rx_bad_csum")
    check(d("tx_ootb_abort") == 7 and d("tx_ootb_shutdown_complete") == 1, "OOTB reply counters")
    check(d("rx_ootb") == len(cases), f"rx_ootb +{d('rx_ootb')}, expected {len(cases)}")
    check(not [a for a in assocs() if a["peer_addr"] == src], "OOTB packets made an association")
    ok("out-of-the-blue packets answered per RFC 9260 8.4 only")


def phase_sack(w, rng):
    # 1. Cum ack beyond anything sent: ABORT (protocol violation).
    p = Peer(w, "198.18.0.14", ARGS.discard, rng=rng)
    p.connect()
    p.exchange(b"x")
    d = Delta()
    w.drain(0)
    p.send(chunk(SACK, 0, sack_value((p.peer_itsn + 1000) & 0xFFFFFFFF, 65536)))
    _, a = w.expect(lambda x: p.mine(x) and ABORT in x.types(), 1.0)
    check(a is not None, "no ABORT for a SACK beyond the TSNs sent")
    cs = causes(a.first(ABORT)[2])
    measure(f"SACK cum ack {1000} TSNs beyond the last sent: {a}; causes {cs}; "
            f"aborts_tx +{d('aborts_tx')} comm_lost +{d('comm_lost')}")
    check(a.vtag == p.my_tag and a.first(ABORT)[1] & 1 == 0 and cs == [C_PROTOCOL_VIOLATION],
          "ABORT for an invalid SACK malformed")
    check(d("aborts_tx") == 1, "aborts_tx")
    p.close()
    ok("SACK of never-sent TSNs: ABORT with Protocol Violation (RFC 9260 6.2.1), counted")

    # 2. Gap blocks against outstanding data: echo sends 6 messages back that
    #    the peer leaves unacknowledged.
    p = Peer(w, "198.18.0.15", ARGS.echo, rng=rng)
    p.connect()
    p.sack_ack = False
    p.auto_sack = False
    for k in range(6):
        p.send(p.data(b"E%02d" % k + b"." * 60))
    end = time.monotonic() + 2
    while len(p.received) < 6 and time.monotonic() < end:
        w.poll(0.05)
    check(len(p.received) >= 6, f"echo sent {len(p.received)} of 6 messages")
    base = p.peer_cum  # itsn - 1: nothing acknowledged yet
    info0 = p.sctp_info()
    out0 = info0["outstanding_chunks"]
    bad0 = info0["retx"]["gap_bad"]
    nz = []
    rounds = [
        ("out of order", sack_value(base, 65536, gaps=[(3, 3), (1, 1)])),
        ("overlapping", sack_value(base, 65536, gaps=[(1, 3), (2, 4)])),
        ("start > end", sack_value(base, 65536, gaps=[(4, 2)])),
        ("start 0", sack_value(base, 65536, gaps=[(0, 1)])),
        ("past the last TSN sent", sack_value(base, 65536, gaps=[(1, 60000)])),
        ("350 blocks + 0 dups", sack_value(base, 65536, gaps=[(1, 1)] * 350)),
        ("175 blocks + 175 dups", sack_value(base, 65536, gaps=[(2, 2)] * 175,
                                              dups=[base] * 175)),
        ("counts 65535/65535, 16-byte body", sack_value(base, 65536, gaps=[(1, 1)], dups=[1],
                                                        ngaps=65535, ndups=65535)),
        ("counts 1/0, no blocks", sack_value(base, 65536, ngaps=1)),
    ]
    for name, v in rounds:
        w.drain(0)
        p.send(chunk(SACK, 0, v))
        got = [x for x in w.poll(0.15) if p.mine(x) and ABORT in x.types()]
        check(not got, f"SACK {name}: ABORT {got}")
        nz.append(name)
    # Thousands: 64 KiB SACKs in 44 IP fragments each, beyond the 4096
    # blocks the daemon looks at.
    for name, v in (("16000 blocks", sack_value(base, 65536, gaps=[(1, 1)] * 16000)),
                    ("8000 blocks + 8000 dups", sack_value(base, 65536, gaps=[(2, 2)] * 8000,
                                                           dups=[base] * 8000))):
        body = sctp(p.sport, p.dport, p.peer_tag, chunk(SACK, 0, v))
        w.drain(0)
        for f in ipv4_frags(p.addr, w.dip, body, rng.randrange(65536)):
            w.s.send(w.frame(p.addr, f))
        got = [x for x in w.poll(0.3) if p.mine(x) and ABORT in x.types()]
        check(not got, f"SACK {name}: ABORT {got}")
        nz.append(f"{name} ({len(body)} bytes)")
    info = p.sctp_info()
    check(info and info["state"] == "ESTABLISHED", f"association {info and info['state']}")
    gb = info["retx"]["gap_bad"] - bad0
    # 1+1+1+1+1+349+174, then 4095 twice: every block but the first valid one
    # of each SACK, the jumbo ones cut at 4096 blocks.
    check(gb == 528 + 2 * 4095, f"gap_bad +{gb}, expected {528 + 2 * 4095}")
    measure(f"hostile SACKs ({len(nz)}), outstanding before {out0}: " + "; ".join(nz) +
            f"; gap_bad +{gb}; drop_bad_chunk {info['counters']['drop_bad_chunk']}, "
            f"retx sacks {info['retx']['sacks']} reneged {info['retx']['reneged']}; state {info['state']}")
    check(info["counters"]["drop_bad_chunk"] == 2, "lying SACK counts not dropped as bad chunks")
    # A true SACK for everything: nothing outstanding, the association works.
    p.sack_ack = True
    p.auto_sack = True
    while ((p.peer_cum + 1) & 0xFFFFFFFF) in p.received:
        p.peer_cum = (p.peer_cum + 1) & 0xFFFFFFFF
    p.send(chunk(SACK, 0, sack_value(p.peer_cum, 1 << 20)))
    time.sleep(0.2)
    info = p.sctp_info()
    check(info["outstanding_chunks"] == 0 and info["cum_ack"] == p.peer_cum,
          f"after the true SACK: outstanding {info['outstanding_chunks']} cum {info['cum_ack']}")
    p.exchange(b"after hostile SACKs")
    ok("out-of-order, overlapping, bogus and thousands of gap blocks and dups: counted, "
       "association intact")
    return p


def phase_window(w, rng, p):
    """DATA far outside the window and below it; p: echo association."""
    info0 = p.sctp_info()
    c0 = info0["counters"]
    far = (p.next_tsn + 10_000_000) & 0xFFFFFFFF
    w.drain(0)
    p.send(p.data(b"far", tsn=far))
    _, s1 = w.expect(lambda x: p.mine(x) and SACK in x.types(), 1.0)
    old = (p.next_tsn - 3) & 0xFFFFFFFF
    w.drain(0)
    p.send(chunk(DATA, 3, data_value(old, 0, 0, 0, b"old")))
    _, s2 = w.expect(lambda x: p.mine(x) and SACK in x.types(), 1.0)
    info = p.sctp_info()
    c = info["counters"]
    check(s1 is not None and s2 is not None, "no SACK for out-of-window / duplicate DATA")
    cum1, _, ng1, nd1 = struct.unpack("!IIHH", s1.first(SACK)[2][:12])
    cum2, _, ng2, nd2 = struct.unpack("!IIHH", s2.first(SACK)[2][:12])
    dups2 = [struct.unpack("!I", s2.first(SACK)[2][12 + 4 * ng2 + 4 * k:16 + 4 * ng2 + 4 * k])[0]
             for k in range(nd2)]
    measure(f"DATA 10^7 TSNs ahead: drop_out_window +{c['drop_out_window'] - c0['drop_out_window']}, "
            f"SACK cum {cum1} gaps {ng1}; DATA 3 TSNs behind: drop_dup_tsn "
            f"+{c['drop_dup_tsn'] - c0['drop_dup_tsn']}, SACK cum {cum2} dups {dups2}")
    check(c["drop_out_window"] - c0["drop_out_window"] == 1, "out-of-window DATA not counted")
    check(cum1 == p.last_tsn() and ng1 == 0, "out-of-window DATA changed the SACK")
    check(c["drop_dup_tsn"] - c0["drop_dup_tsn"] == 1 and dups2 == [old] and cum2 == p.last_tsn(),
          "duplicate DATA not reported")
    ok("DATA far beyond the window dropped and counted; an old TSN reported as duplicate")


def phase_lengths(w, rng, p):
    """Broken chunk lengths on an established association."""
    d = Delta()
    c0 = p.sctp_info()["counters"]
    hb = chunk(HB, 0, hb_value())
    t = p.next_tsn
    cases = [
        ("chunk length 0", struct.pack("!BBH", HB, 0, 0) + hb),
        ("chunk length 2", struct.pack("!BBH", DATA, 3, 2) + b"\0" * 16),
        ("chunk length past the packet", chunk(DATA, 3, data_value(t, 0, 0, 0, b"abcd"), length=1000)),
        ("chunk length 65535 in 24 bytes", chunk(HB, 0, hb_value(b"x"), length=65535)),
        ("3 bytes after the last chunk", hb + b"\1\2\3"),
        ("header only, no chunk", b""),
    ]
    for name, body in cases:
        w.drain(0)
        p.send(body)
        got = [x for x in w.poll(0.2) if p.mine(x)]
        check(not got, f"{name}: answered {got}")
    mal = d("rx_malformed")
    check(mal == len(cases), f"rx_malformed +{mal}, expected {len(cases)}")
    # Chunks whose own length is too short for their type: dropped, the rest of
    # the packet processed (the HEARTBEAT after them is answered).
    short = [
        ("DATA with 8 bytes", chunk(DATA, 3, b"\0" * 4)),
        ("SACK with 8 bytes", chunk(SACK, 0, b"\0" * 4)),
        ("HEARTBEAT with no info", chunk(HB, 0, b"")),
        ("SHUTDOWN with 4 bytes", chunk(SHUTDOWN, 0, b"")),
    ]
    acks = 0
    for name, body in short:
        w.drain(0)
        p.send(body + hb)
        _, a = w.expect(lambda x: p.mine(x) and HB_ACK in x.types(), 0.5)
        acks += a is not None
    info = p.sctp_info()
    c = info["counters"]
    measure(f"broken lengths ({len(cases)} packets): rx_malformed +{mal}, no answer; "
            f"too-short chunks ({len(short)}): drop_bad_chunk +{c['drop_bad_chunk'] - c0['drop_bad_chunk']}, "
            f"heartbeats after them answered {acks}/{len(short)}; state {info['state']}")
    check(info["state"] == "ESTABLISHED", "association lost to bad lengths")
    check(c["drop_bad_chunk"] - c0["drop_bad_chunk"] == len(short), "short chunks not counted")
    check(acks == len(short), "a too-short chunk stopped the packet")
    p.exchange(b"after bad lengths")
    ok("chunk lengths 0/2/past the packet/65535 and trailing bytes: packet dropped, counted")


def phase_unknown(w, rng, p):
    """RFC 9260 3.2: unknown chunk types by their upper two bits."""
    out = []
    c0 = p.sctp_info()["counters"]
    for ctype, want_err, want_hb in ((0x3E, False, False), (0x7E, True, False),
                                     (0xBE, False, True), (0xFE, True, True)):
        w.drain(0)
        unk = chunk(ctype, 0x5A, b"hostile")  # 11 bytes: the report must pad it
        p.send(unk + chunk(HB, 0, hb_value()))
        got = [x for x in w.poll(0.3) if p.mine(x)]
        errs = [c for x in got for c in x.chunks if c[0] == ERROR]
        hbs = [c for x in got for c in x.chunks if c[0] == HB_ACK]
        out.append(f"type {ctype:#04x} (bits {ctype >> 6:02b}): ERROR {len(errs)} HEARTBEAT ACK {len(hbs)}")
        check(len(errs) == int(want_err) and len(hbs) == int(want_hb),
              f"unknown chunk {ctype:#x}: ERROR {len(errs)} HB ACK {len(hbs)}")
        if want_err:
            cs = tlvs(errs[0][2])
            check(len(cs) == 1 and cs[0][0] == C_UNRECOGNIZED_CHUNK and cs[0][1] == unk,
                  f"unknown chunk {ctype:#x}: ERROR causes {cs}")
    c = p.sctp_info()["counters"]
    du = c["drop_unknown_chunk"] - c0["drop_unknown_chunk"]
    check(du == 4, f"drop_unknown_chunk +{du}")
    measure("unknown chunks bundled before a HEARTBEAT: " + "; ".join(out) + f"; drop_unknown_chunk +{du}")
    ok("unknown chunk types: 00 stop, 01 stop+report, 10 skip, 11 skip+report (RFC 9260 3.2)")


def phase_unknown_params(w, rng):
    out = []
    for ptype in (0x3FF0, 0x7FF0, 0xBFF0, 0xFFF0):
        q = Peer(w, "198.18.0.16", ARGS.discard, rng=rng)
        unk = tlv(ptype, b"odd-param")
        ia = q.init_ack(init_params=unk + tlv(12, struct.pack("!H", 5)))  # + Supported Address Types
        un = [v for t, v in ia["params"] if t == P_UNRECOGNIZED]
        rep = (ptype >> 14) & 1
        out.append(f"param {ptype:#06x} (bits {ptype >> 14:02b}): INIT ACK, Unrecognized Parameter {len(un)}")
        check(len(un) == rep, f"param {ptype:#x}: {len(un)} Unrecognized Parameters")
        if rep:
            # The TLV as sent, its padding inside the wrapper (3.2.1).
            check(un[0] == unk, f"param {ptype:#x}: echoed {un[0]!r}, sent {unk!r}")
        q.close()
    # Unknown parameter lengths that lie: the INIT is dropped or aborted, never
    # crashes.
    d = Delta()
    q = Peer(w, "198.18.0.16", ARGS.discard, rng=rng)
    for body in (struct.pack("!HH", 0xBFF0, 200) + b"x" * 8, struct.pack("!HH", 0xBFF0, 2),
                 struct.pack("!HH", 5, 4)):
        w.drain(0)
        q.send(q.init_chunk(body), vtag=0)
        w.poll(0.15)
    measure("unknown INIT parameters: " + "; ".join(out) +
            f"; 3 INITs with lying parameter lengths: rx_init_bad +{d('rx_init_bad')}, "
            f"tx_init_ack +{d('tx_init_ack')}, tx_ootb_abort +{d('tx_ootb_abort')}")
    check(d("rx_init_bad") == 3, "bad INIT parameters not counted")
    q.close()
    ok("unknown INIT parameters: reported only for 01/11 (RFC 9260 3.2.1, 3.2.2)")


def ipv4_frags(src, dst, payload, ident, size=1480):
    """IPv4 fragments of payload (proto 132), size bytes of data each."""
    out = []
    for off in range(0, len(payload), size):
        part = payload[off:off + size]
        more = off + size < len(payload)
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(part), ident,
                        (0x2000 if more else 0) | off // 8, 64, 132, 0,
                        ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed)
        out.append(h[:10] + struct.pack("!H", csum16(h)) + h[12:] + part)
    return out


def phase_init_checks(w, rng):
    """INIT field and bundling rules (RFC 9260 3.3.2, 6.10, 8.5.1), and an
    INIT of 16 KiB in IP fragments carrying 2000 reportable unknown
    parameters."""
    src = "198.18.0.16"
    w.honest.add(src)
    sport = rng.randrange(20000, 60000)
    it = rng.randrange(1, 1 << 32)
    host = tlv(11, b"attacker.example\0")
    cases = [  # name, vtag, chunks, counter, expected answer (cause) or None
        ("Initiate Tag 0", 0, chunk(INIT, 0, init_value(0, 65536, 10, 10, 1)), "rx_init_bad", None),
        ("OS 0", 0, chunk(INIT, 0, init_value(it, 65536, 0, 10, 1)), "rx_init_bad", 7),
        ("MIS 0", 0, chunk(INIT, 0, init_value(it, 65536, 10, 0, 1)), "rx_init_bad", 7),
        ("a_rwnd 1499", 0, chunk(INIT, 0, init_value(it, 1499, 10, 10, 1)), "rx_init_bad", 7),
        ("Host Name Address", 0, chunk(INIT, 0, init_value(it, 65536, 10, 10, 1, host)),
         "rx_init_bad", 5),
        ("INIT with a nonzero tag", 0x1234, chunk(INIT, 0, init_value(it, 65536, 10, 10, 1)),
         "rx_bad_vtag", None),
        ("INIT bundled with DATA", 0, chunk(INIT, 0, init_value(it, 65536, 10, 10, 1)) +
         chunk(DATA, 3, data_value(1, 0, 0, 0, b"x")), "rx_bad_bundling", None),
        ("INIT of 16 bytes", 0, chunk(INIT, 0, b"\0" * 12), "rx_init_bad", None),
    ]
    seen = []
    for name, vtag, body, ctr, want in cases:
        d = Delta()
        w.drain(0)
        w.send_sctp(src, sport, ARGS.discard, vtag, body)
        got = [x for x in w.poll(0.25) if x.dst == src and x.dport == sport]
        check(d(ctr) == 1 and d("tx_init_ack") == 0, f"{name}: {ctr} +{d(ctr)}, tx_init_ack +{d('tx_init_ack')}")
        if want is None:
            check(not got, f"{name}: answered {got}")
            seen.append(f"{name}: {ctr} +1, none")
            continue
        check(len(got) == 1 and got[0].types() == [ABORT] and got[0].vtag == it and
              not got[0].chunks[0][1] & 1 and causes(got[0].chunks[0][2]) == [want],
              f"{name}: {got} {[causes(x.chunks[0][2]) for x in got]}")
        seen.append(f"{name}: {ctr} +1, ABORT(init tag, cause {want})")
    # 2000 unknown parameters asking for a report, in 11 fragments.
    d = Delta()
    q = Peer(w, src, ARGS.discard, rng=rng)
    params = b"".join(tlv(0xFFF0 | (k & 0xF), struct.pack("!I", k)) for k in range(2000))
    init = sctp(q.sport, ARGS.discard, 0, q.init_chunk(params))
    frags = ipv4_frags(src, w.dip, init, rng.randrange(65536))
    w.drain(0)
    for f in frags:
        w.s.send(w.frame(src, f))
    _, ia = w.expect(lambda x: q.mine(x) and INIT_ACK in x.types(), 1.0)
    check(ia is not None, "no INIT ACK for a 16 KiB INIT")
    un = [v for t, v in tlvs(ia.first(INIT_ACK)[2][16:]) if t == P_UNRECOGNIZED]
    size = 12 + sum(4 + len(v) + (-len(v) % 4) for _, _, v in ia.chunks)
    seen.append(f"INIT of {len(init)} bytes in {len(frags)} IP fragments with 2000 unknown 11-type "
                f"parameters: INIT ACK of {size} bytes reporting {len(un)}")
    check(0 < len(un) <= 8 and size <= 1480, "INIT ACK for a huge INIT unbounded")
    ia_ok = q.init_ack()  # and the peer can still get one
    q.echo_cookie(ia_ok)
    q.exchange(b"after the big INIT")
    q.abort()
    measure("INIT checks: " + "; ".join(seen))
    ok("INIT field/bundling rules and a 16 KiB INIT: RFC answers only, reports bounded")


def phase_hb_ack(w, rng, p):
    """HEARTBEAT ACKs we never asked for."""
    c0 = p.sctp_info()["counters"]
    for info in (b"", b"\0" * 40, bytes(rng.randrange(256) for _ in range(64))):
        w.drain(0)
        p.send(chunk(HB_ACK, 0, tlv(1, info)))
        got = [x for x in w.poll(0.15) if p.mine(x)]
        check(not got, f"forged HEARTBEAT ACK answered: {got}")
    c = p.sctp_info()["counters"]
    n = c["drop_bad_hb_ack"] - c0["drop_bad_hb_ack"]
    measure(f"3 forged HEARTBEAT ACKs: drop_bad_hb_ack +{n}, hb_acked +{c['hb_acked'] - c0['hb_acked']}")
    check(n == 3 and c["hb_acked"] == c0["hb_acked"], "forged HEARTBEAT ACKs not counted")
    ok("forged HEARTBEAT ACKs ignored and counted")


def phase_reasm(w, rng):
    """DATA on a stream that does not exist, and a message with a hole that
    would fill the receive window (RFC 9260 6.2, 6.5, 6.9)."""
    p = Peer(w, "198.18.0.19", ARGS.discard, rng=rng)
    p.connect()
    c0 = p.sctp_info()["counters"]
    w.drain(0)
    p.send(p.data(b"no such stream", sid=50))
    got = []
    end = time.monotonic() + 1.0
    while time.monotonic() < end and not (any(ERROR in x.types() for x in got) and
                                           any(SACK in x.types() for x in got)):
        got += [x for x in w.poll(0.05) if p.mine(x)]
    errs = [c for x in got for c in x.chunks if c[0] == ERROR]
    sacks = [c for x in got for c in x.chunks if c[0] == SACK]
    c = p.sctp_info()["counters"]
    check(len(errs) == 1 and causes(errs[0][2]) == [1] and errs[0][2][4:6] == b"\0\x32",
          f"invalid stream: ERROR {errs}")
    check(sacks and struct.unpack("!I", sacks[-1][2][:4])[0] == p.last_tsn(),
          "invalid stream: the TSN was not acknowledged")
    check(c["drop_bad_sid"] - c0["drop_bad_sid"] == 1, "drop_bad_sid")
    measure("DATA on stream 50 of 10: ERROR with Invalid Stream Identifier (1) for stream 50, "
            f"SACK acknowledging its TSN, drop_bad_sid +1")
    ok("DATA for a stream that does not exist: acknowledged, reported, dropped (6.5)")

    # A message whose second fragment never comes: B at t, middle fragments at
    # t+2..t+400 (1000 bytes each), ordered, stream 1.
    info0 = p.sctp_info()
    c0 = info0["counters"]
    rss0 = rss_kb()
    t = p.next_tsn
    n = 400
    sent = 0
    w.drain(0)
    last = None
    nsacks = 0

    def take_sacks(timeout):
        nonlocal last, nsacks
        for x in w.poll(timeout):
            if p.mine(x) and SACK in x.types():
                last = x
                nsacks += 1

    for k in [0] + list(range(2, n + 1)):
        flags = 2 if k == 0 else 0  # B only, then middles
        p.send(chunk(DATA, flags, data_value((t + k) & 0xFFFFFFFF, 1, 0, 0, bytes([k & 0xFF]) * 1000)))
        sent += 1
        if k % 20 == 0:
            take_sacks(0.01)
    take_sacks(0.5)
    info = p.sctp_info()
    c = info["counters"]
    rss1 = rss_kb()
    check(last is not None, "no SACK during the hole attack")
    cum, arwnd, ng, nd = struct.unpack("!IIHH", last.first(SACK)[2][:12])
    gaps = [struct.unpack("!HH", last.first(SACK)[2][12 + 4 * i:16 + 4 * i]) for i in range(ng)]
    zw = c["drop_zero_window"] - c0["drop_zero_window"]
    nm = c["drop_nomem"] - c0["drop_nomem"]
    measure(f"hole attack: {sent} fragments of 1000 bytes, TSN t+1 missing: {nsacks} SACKs, last: cum t+"
            f"{(cum - t) & 0xFFFFFFFF}, a_rwnd {arwnd}, gaps {gaps}; drop_zero_window +{zw} drop_nomem +{nm}; "
            f"daemon rwnd {info['rwnd']} reasm bytes_in +{info['reasm']['bytes_in'] - info0['reasm']['bytes_in']}; "
            f"rss {rss0} -> {rss1} kB; state {info['state']}")
    check(info["state"] == "ESTABLISHED", "association lost to the hole attack")
    check(cum == t, "the cum TSN is not at the hole")
    held = info["reasm"]["bytes_in"] - info0["reasm"]["bytes_in"]
    check(held <= 212992 + 1000, f"{held} bytes taken into reassembly, rcvbuf 212992")
    check(zw + nm > 0 and zw + nm + held // 1000 >= sent - 1, "fragments beyond the window not dropped")
    # Fill the hole: everything held becomes in sequence and the message is
    # delivered partially (pd point rcvbuf / 2), the window reopens.
    w.drain(0)
    p.send(chunk(DATA, 0, data_value((t + 1) & 0xFFFFFFFF, 1, 0, 0, b"\1" * 1000)))
    _, s2 = w.expect(lambda x: p.mine(x) and SACK in x.types(), 1.0)
    time.sleep(0.3)
    info = p.sctp_info()
    check(s2 is not None, "no SACK after the hole was filled")
    cum2, arwnd2 = struct.unpack("!II", s2.first(SACK)[2][:8])
    measure(f"hole filled: SACK cum t+{(cum2 - t) & 0xFFFFFFFF} a_rwnd {arwnd2}; daemon rwnd {info['rwnd']} "
            f"pd_started {info['reasm']['pd_started']} pd_pieces {info['reasm']['pd_pieces']}")
    check(((cum2 - t) & 0xFFFFFFFF) >= 2 and info["reasm"]["pd_started"] >= 1,
          "the message did not move after the hole was filled")
    p.abort()
    ok("a fragment hole fills the window only: the rest dropped and counted; filling it delivers")


def phase_no_user_data(w, rng):
    p = Peer(w, "198.18.0.17", ARGS.discard, rng=rng)
    p.connect()
    d = Delta()
    w.drain(0)
    p.send(chunk(DATA, 3, struct.pack("!IHHI", p.next_tsn, 0, 0, 0)))
    _, a = w.expect(lambda x: p.mine(x) and ABORT in x.types(), 1.0)
    check(a is not None, "no ABORT for DATA without user data")
    cs = causes(a.first(ABORT)[2])
    measure(f"DATA of length 16: {a} causes {cs}, aborts_tx +{d('aborts_tx')}")
    check(cs == [C_NO_USER_DATA] and a.vtag == p.my_tag, "No User Data ABORT wrong")
    p.close()
    ok("DATA without user data: ABORT with No User Data (RFC 9260 6.2)")


def phase_zero_window(w, rng):
    """A peer that never reads: a_rwnd 0 in every SACK while echo sends."""
    p = Peer(w, "198.18.0.18", ARGS.echo, rng=rng, a_rwnd=4096)
    p.connect()
    p.sack_rwnd = 0
    p.sack_ack = False  # acknowledge nothing: the window stays shut
    msgs = 60
    for k in range(msgs):
        p.send(p.data(b"Z%03d" % k + b"z" * 996))
        if k % 10 == 9:
            w.expect(p.sack_for, 1.0)
    t0 = time.monotonic()
    w.poll(1.0)
    pk0 = p.data_pkts
    n0 = len(p.received)
    w.poll(ARGS.zwp_seconds)
    span = time.monotonic() - t0
    info = p.sctp_info()
    probes = p.data_pkts - pk0
    measure(f"zero window: {msgs} x 1000-byte messages to echo, our a_rwnd 4096 then 0, nothing "
            f"acknowledged; {n0} distinct TSNs received in the first second, {probes} DATA packets in "
            f"the next {span - 1:.1f} s; daemon: state {info['state']} flight {info['flight']} "
            f"outstanding {info['outstanding_chunks']} peer_rwnd {info['peer_rwnd']} sndbuf_used "
            f"{info['sndbuf_used']} queued_msgs {info['queued_msgs']} t3 {info['counters']['t3_timeouts']} "
            f"retx zwp {info['retx']['zwp']} errors {info['errors']}")
    check(info["state"] == "ESTABLISHED", "association lost under a zero window")
    # 6.1 A: probes the peer SACKs are no errors.
    check(info["errors"] == 0, f"association errors {info['errors']} while every probe was SACKed")
    check(n0 * 1000 <= 4096 + 2000, f"{n0} messages sent into a 4096-byte window")
    check(probes <= ARGS.zwp_seconds + 2, f"{probes} DATA packets while the window was shut")
    check(info["sndbuf_used"] <= 212992, "send buffer beyond its bound")
    # More than the association's send buffer (208 KiB) of echo requests
    # while the window stays shut: echo's replies wait for room and the
    # service stops reading meanwhile, so memory stays bounded.
    more = 400
    pk1 = p.data_pkts
    t1 = time.monotonic()
    rss_a = rss_kb()
    for k in range(msgs, msgs + more):
        p.send(p.data(b"Z%03d" % k + b"z" * 996))
        if k % 10 == 9:
            _, sk = w.expect(p.sack_for, 2.0)
            check(sk is not None, f"no SACK for our message {k}")
    w.poll(0.5)
    info = p.sctp_info()
    probes2 = p.data_pkts - pk1
    rss_b = rss_kb()
    measure(f"zero window, {more} more messages ({more * 1000} bytes): daemon sndbuf_used "
            f"{info['sndbuf_used']} queued_msgs {info['queued_msgs']} outstanding "
            f"{info['outstanding_chunks']}, {probes2} DATA packets in {time.monotonic() - t1:.1f} s, "
            f"rss {rss_a} -> {rss_b} kB; state {info['state']} t3 {info['counters']['t3_timeouts']} "
            f"errors {info['errors']}")
    check(info["sndbuf_used"] <= 212992, "send buffer beyond its bound")
    check(probes2 <= time.monotonic() - t1 + 2, f"{probes2} DATA packets while the window was shut")
    check(info["state"] == "ESTABLISHED", "association lost under a zero window")
    check(info["errors"] == 0, f"association errors {info['errors']} while every probe was SACKed")
    queued = info["queued_msgs"] + info["outstanding_chunks"]
    # Open the window: everything echoed arrives, nothing lost.
    p.sack_rwnd = None
    p.a_rwnd = 1 << 20
    p.sack_ack = True
    while ((p.peer_cum + 1) & 0xFFFFFFFF) in p.received:
        p.peer_cum = (p.peer_cum + 1) & 0xFFFFFFFF
    p.send(chunk(SACK, 0, sack_value(p.peer_cum, p.a_rwnd)))
    end = time.monotonic() + 10
    last, last_t = -1, time.monotonic()
    while time.monotonic() < end:
        w.poll(0.1)
        n = len(p.received)
        if n != last:
            last, last_t = n, time.monotonic()
        elif time.monotonic() - last_t > 1.0:
            break
    have = {v[:4] for v in p.received.values()}
    first = {b"Z%03d" % k for k in range(msgs)}
    info = p.sctp_info()
    measure(f"window opened: {len(have)} distinct echoes received ({len(first & have)}/{msgs} of the "
            f"first batch, {len(have) - len(first & have)}/{more} of the second; the daemon held "
            f"{queued}); daemon now sndbuf_used {info['sndbuf_used']} outstanding "
            f"{info['outstanding_chunks']}")
    check(first <= have, f"{len(first - have)} echoes of the first batch lost")
    check(len(have) == len(p.received), "an echo came twice under two TSNs")
    # What the daemon may hold for a reader that never reads: the echo
    # socket's send queue (SO_SNDBUF 256 KiB, doubled as Linux does) and the
    # association's send buffer (sctp.sndbuf_bytes, 212992); beyond that
    # echo stops reading and the window towards us closes. Echo drops
    # nothing: every request of both batches comes back.
    check(len(have) <= (2 * 262144 + 212992) // 1000 + 1, f"{len(have)} echoes held for a closed window")
    sent = {b"Z%03d" % k for k in range(msgs + more)}
    check(sent <= have, f"{len(sent - have)} echoes lost")
    check(info["sndbuf_used"] == 0 and info["outstanding_chunks"] == 0, "daemon still holds data")
    ok("zero window: probes only, send buffer bounded, everything queued delivered once it opened")
    p.abort()


def phase_restart(w, rng):
    """A peer restarts (RFC 9260 5.2.4 case A: a new INIT and COOKIE ECHO
    from the same address and ports); afterwards only the new tags are
    valid (8.5): chunks with the old association's tag are dropped."""
    src = "198.18.0.21"
    p = Peer(w, src, ARGS.discard, rng=rng)
    p.connect()
    p.exchange(b"before the restart")
    old_tag = p.peer_tag
    d = Delta()
    q = Peer(w, src, ARGS.discard, sport=p.sport, rng=rng)
    p.close()
    ia = q.init_ack()
    check(ia["tag"] != old_tag, "restart INIT ACK reuses the old tag")
    q.echo_cookie(ia)
    check(d("restarts") == 1, f"restarts +{d('restarts')}")
    stale = [
        ("DATA", p.data(b"stale data")),
        ("SACK", chunk(SACK, 0, sack_value(p.peer_cum, 65536))),
        ("HEARTBEAT", chunk(HB, 0, hb_value())),
        ("SHUTDOWN", chunk(SHUTDOWN, 0, struct.pack("!I", p.peer_cum))),
        ("ABORT", chunk(ABORT)),
    ]
    d = Delta()
    for name, c in stale:
        w.drain(0)
        p.send(c, vtag=old_tag)
        got = [x for x in w.poll(0.25) if q.mine(x)]
        check(not got, f"old-tag {name} after a restart: answered {got}")
    info = q.sctp_info()
    check(info and info["state"] == "ESTABLISHED", f"association now {info and info['state']}")
    check(d("rx_bad_vtag") == len(stale), f"rx_bad_vtag +{d('rx_bad_vtag')} for {len(stale)}")
    q.exchange(b"after the restart")
    measure(f"restart: old-tag DATA/SACK/HEARTBEAT/SHUTDOWN/ABORT dropped (rx_bad_vtag "
            f"+{d('rx_bad_vtag')}), new tag works")
    q.abort()
    ok("after a restart only the new tags are accepted")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst", default="198.18.0.2")
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--kernel-mac", required=True)
    ap.add_argument("--nstack", required=True)
    ap.add_argument("--ctl", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--discard", type=int, default=5001)
    ap.add_argument("--echo", type=int, default=7)
    ap.add_argument("--closed-port", type=int, default=9)
    ap.add_argument("--flood", type=int, default=5000)
    ap.add_argument("--cookie-life", type=float, default=1.0)
    ap.add_argument("--zwp-seconds", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=120.0)
    ap.add_argument("--rss-file", default=None)
    ap.add_argument("--phases", default=None, help="comma list: run only these phases")
    ARGS = ap.parse_args()
    addr_ok(ARGS.dst)
    if not 1 <= ARGS.flood <= 100000:
        sys.exit("--flood 1..100000")
    rng = random.Random(ARGS.seed)
    w = Wire(ARGS.iface, ARGS.dst_mac, ARGS.kernel_mac, ARGS.dst)
    times = []

    only = set(ARGS.phases.split(",")) if ARGS.phases else None

    def run(name, fn, *a):
        if only is not None and name not in only:
            return None
        t = time.monotonic()
        r = fn(w, rng, *a)
        times.append(f"{name} {time.monotonic() - t:.1f}")
        bounded()
        return r

    try:
        grow = run("flood", phase_flood)
        p = run("cookies", phase_cookies)
        run("vtags", phase_vtags, p)
        run("ootb", phase_ootb)
        e = run("sack", phase_sack)
        run("window", phase_window, e)
        run("lengths", phase_lengths, e)
        run("unknown", phase_unknown, e)
        run("hb_ack", phase_hb_ack, e)
        if e:
            e.abort()
        run("params", phase_unknown_params)
        run("init", phase_init_checks)
        run("no_user_data", phase_no_user_data)
        run("reasm", phase_reasm)
        run("zero_window", phase_zero_window)
        run("restart", phase_restart)
        alive("end")
        if ARGS.rss_file:
            with open(ARGS.rss_file, "w") as f:
                f.write(f"{grow}\n")
    except Fail as ex:
        print(f"FAIL: {ex} (seconds per phase: {', '.join(times)})", flush=True)
        return 1
    measure("seconds per phase: " + ", ".join(times))
    print(f"sctp_attacks: done in {time.monotonic() - T0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
