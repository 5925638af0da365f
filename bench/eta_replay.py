#!/usr/bin/env python3
"""How right the progress line's "~N min left" is, replayed on measured units (docs/performance.md,
"The time left on the progress line").

Usage: eta_replay.py UNITS.tsv[=ORDER.txt] [...] [--order bench/data/fa2.8.3-setup-order.txt]

Each UNITS.tsv is a row's measured units (bench/data/*-units.tsv: unit, wall_s, ...), started in
the order of its ORDER.txt, else --order's. The replay builds the row as one cell with J compiles
at once (J = 4 and 16), each started the moment one ends, taking each unit's measured wall time.
At every unit's end it compares estimates of the time left with the time that was really left,
by the costs a build has: guessed (1 a unit, 2 a backward one: costs/row_costs.h) or recorded
(the measured times themselves):

  rate     what fabuild said before it knew J: the time so far times the cost left over the cost
           done. It counts only finished units, so while the first J run it sees little done for
           the time spent.
  packed   knowing J, with the work left packed perfectly on the slots: the compiles running
           started at the latest ends (the first J at 0), so the slot-time spent on them is
           known; the rest of the slots' time went into the finished units, which gives the
           seconds a unit of cost takes; the cost left at that rate, less what the running ones
           spent, over the slots.
  fabuild  what fabuild says (app/compile_follower.cpp, compile_progress): the seconds a unit of
           cost takes, at least what the finished and running ones together say (a running one
           has cost at least its time so far); each running one takes a unit of the mean cost
           left, less what it spent, and the units not started are handed to the slots as they
           free, as ninja does; the time left is when the last ends. Nothing until
           max(2, J/4) units are compiled.

It prints, for each row, J and cost basis, the median, smallest and largest estimate / real time
left over three stretches of the build (0-20 %, 20-50 %, 50-90 % of its units done).
"""

import argparse
import csv
import heapq
import statistics


def read_units(path):
    lines = (line for line in open(path) if not line.startswith("#"))
    return {row["unit"]: float(row["wall_s"]) for row in csv.DictReader(lines, delimiter="\t")}


def left_by_fabuild(now, slots, ended, compiled_cost, done_cost, total_cost, done, total):
    """app/compile_follower.cpp's estimate: None where it says no time."""
    finished, to_compile = len(ended), total - done
    if finished < max(2, -(-slots // 4)) or to_compile == 0 or compiled_cost <= 0:
        return None
    starts = sorted([0.0] * slots + ended)[: min(finished + to_compile, slots + finished)]
    spent = [max(0.0, now - s) for s in starts[finished:]]
    busy = sum(ended) - sum(starts[:finished])
    mean_left = (total_cost - done_cost) / to_compile
    per_cost = max(busy / compiled_cost, (busy + sum(spent)) / (compiled_cost + len(spent) * mean_left))
    unit = per_cost * mean_left
    free = [max(unit - s, 0.1 * unit) for s in spent] + [0.0] * (slots - len(spent))
    heapq.heapify(free)
    for _ in range(to_compile - len(spent)):
        heapq.heappush(free, heapq.heappop(free) + unit)
    return max(free)


def replay(walls, order, slots, costs):
    units = [u for u in order if u in walls] + sorted(u for u in walls if u not in order)
    waiting = list(units)
    start, end, running = {}, {}, []
    for _ in range(min(slots, len(waiting))):
        u = waiting.pop(0)
        start[u] = 0.0
        heapq.heappush(running, (walls[u], u))
    ends = []
    while running:
        t, u = heapq.heappop(running)
        end[u] = t
        ends.append((t, u))
        if waiting:
            v = waiting.pop(0)
            start[v] = t
            heapq.heappush(running, (t + walls[v], v))
    total_time = max(end.values())
    total_cost = sum(costs[u] for u in units)
    slots = min(slots, len(units))
    done_cost = 0.0
    out = []
    for i, (now, u) in enumerate(ends[:-1]):
        done_cost += costs[u]
        done = i + 1
        left = total_time - now
        rate = now * (total_cost - done_cost) / done_cost
        ended = [t for t, _ in ends[:done]]
        starts = sorted([0.0] * slots + ended)[: min(len(units), slots + done)]
        spent = sum(now - s for s in starts[done:])
        per_cost = (sum(ended) - sum(starts[:done])) / done_cost
        work = per_cost * (total_cost - done_cost)
        packed = max(work - spent, 0.1 * work) / min(slots, len(units) - done)
        said = left_by_fabuild(now, slots, ended, done_cost, done_cost, total_cost, done, len(units))
        out.append((done / len(units), rate / left, packed / left, None if said is None else said / left))
    return total_time, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("units", nargs="+")
    ap.add_argument("--order", default="bench/data/fa2.8.3-setup-order.txt")
    args = ap.parse_args()
    default_order = [line.strip().split("/")[-1] for line in open(args.order) if line.strip() and not line.startswith("#")]
    print("row\tJ\tcosts\tbuild\testimate\t0-20 % (median min-max)\t20-50 %\t50-90 %")
    for arg in args.units:
        path, _, own_order = arg.partition("=")
        walls = read_units(path)
        order = default_order
        if own_order:
            order = [line.strip().split("/")[-1] for line in open(own_order) if line.strip() and not line.startswith("#")]
        for slots in (4, 16):
            for basis in ("guessed", "recorded"):
                costs = {u: walls[u] if basis == "recorded" else (2.0 if "_bwd_" in u else 1.0) for u in walls}
                total, points = replay(walls, order, slots, costs)
                for k, name in ((1, "rate"), (2, "packed"), (3, "fabuild")):
                    cols = []
                    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 0.9)):
                        r = [p[k] for p in points if lo <= p[0] < hi and p[k] is not None]
                        cols.append(f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})" if r else "-")
                    print(f"{path.split('/')[-1]}\t{slots}\t{basis}\t{total:.0f} s\t{name}\t" + "\t".join(cols))


if __name__ == "__main__":
    main()
