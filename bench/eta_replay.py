#!/usr/bin/env python3
"""How right the progress line's "~N min left" is, replayed on measured units (docs/performance.md,
"The time left on the progress line").

Usage: eta_replay.py UNITS.tsv [UNITS.tsv ...] [--order bench/data/fa2.8.3-setup-order.txt]

Each UNITS.tsv is a row's measured units (bench/data/*-units.tsv: unit, wall_s, ...). The replay
builds the row as one cell with J compiles at once (J = 4 and 16), started in setup.py's order, each
the moment one ends, taking each unit's measured wall time. At every unit's end it compares two
estimates of the time left with the time that was really left, by the costs a build has: guessed
(1 a kernel, 2 a backward one: costs/row_costs.h) or recorded (the measured times themselves):

  rate   what fabuild said until the slots' estimate came: the time so far times the cost left
         over the cost done. It counts only finished units, so while the first J run
         it sees little done for the time spent.
  slots  what the follower says knowing J (the cell's MAX_JOBS grant): the compiles running started when the last J-ish
         ended (the first J at 0), so the slot-time spent on them is known; the rest of the time
         the slots were busy went into the finished units, which gives the seconds a unit of cost
         takes; the cost left at that rate, less what the running ones have already spent,
         spread over the slots.
  fabuild  what fabuild says (compile_progress): the slots' estimate while under a fifth of the
           units are done, the mean of both after.

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
    done_cost = 0.0
    out = []
    for i, (now, u) in enumerate(ends[:-1]):
        done_cost += costs[u]
        done = i + 1
        left = total_time - now
        rate = now * (total_cost - done_cost) / done_cost
        # What the follower knows: the end times so far, and that a new compile starts at each.
        starts = sorted([0.0] * min(slots, len(units)) + [t for t, _ in ends[:done]])[: min(len(units), slots + done)]
        on = starts[done:]  # the running ones: the latest starts
        spent = sum(now - s for s in on)
        busy = sum(min(now, end[x]) - start[x] for x in start if start[x] <= now)
        per_cost = (busy - spent) / done_cost
        rest = max(per_cost * (total_cost - done_cost) - spent, 0.1 * per_cost * (total_cost - done_cost))
        by_slots = rest / min(slots, len(units) - done)
        said = by_slots if 5 * done < len(units) else (by_slots + rate) / 2
        out.append((done / len(units), rate / left, by_slots / left, said / left))
    return total_time, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("units", nargs="+")
    ap.add_argument("--order", default="bench/data/fa2.8.3-setup-order.txt")
    args = ap.parse_args()
    order = [line.strip().split("/")[-1] for line in open(args.order) if line.strip() and not line.startswith("#")]
    print("row\tJ\tcosts\tbuild\testimate\t0-20 % (median min-max)\t20-50 %\t50-90 %")
    for path in args.units:
        walls = read_units(path)
        for slots in (4, 16):
            for basis in ("guessed", "recorded"):
                costs = {u: walls[u] if basis == "recorded" else (2.0 if "_bwd_" in u else 1.0) for u in walls}
                total, points = replay(walls, order, slots, costs)
                for k, name in ((1, "rate"), (2, "slots"), (3, "fabuild")):
                    cols = []
                    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 0.9)):
                        r = [p[k] for p in points if lo <= p[0] < hi]
                        cols.append(f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})" if r else "-")
                    print(f"{path.split('/')[-1]}\t{slots}\t{basis}\t{total:.0f} s\t{name}\t" + "\t".join(cols))


if __name__ == "__main__":
    main()
