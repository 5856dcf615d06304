#!/usr/bin/python3
"""Summarises ping RTT series (one run of `ping -c 3` per line, RTTs in ms)
into the first-ping penalty table of bench/arp_latency.sh."""
import statistics
import sys


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


args = sys.argv[1:]
print("| scenario | runs | first RTT median (ms) | steady RTT median (ms) | penalty median (ms) | penalty p99 (ms) |")
print("|---|---|---|---|---|---|")
for label, path in zip(args[0::2], args[1::2]):
    firsts, steadies, pens = [], [], []
    for line in open(path):
        r = [float(x) for x in line.split()]
        if len(r) < 3:
            continue  # a lost reply: counted out, shown by the run count
        steady = statistics.median(r[1:])
        firsts.append(r[0])
        steadies.append(steady)
        pens.append(r[0] - steady)
    if not pens:
        print(f"| {label} | 0 | - | - | - | - |")
        continue
    print(f"| {label} | {len(pens)} | {statistics.median(firsts):.3f} | {statistics.median(steadies):.3f} "
          f"| {statistics.median(pens):.3f} | {pct(pens, 0.99):.3f} |")
