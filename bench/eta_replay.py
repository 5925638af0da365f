#!/usr/bin/env python3
"""How right the progress line's "~N min left" is, replayed on measured units (docs/performance.md,
"The time left on the progress line").

Usage: eta_replay.py UNITS.tsv[=ORDER.txt] [...] [--order bench/data/fa2.8.3-setup-order.txt]
                     [--backward-off UNITS.tsv ...] [--fabuild build/fabuild]

Each UNITS.tsv is a row's measured units (bench/data/*-units.tsv: unit, wall_s, ...), started in
the order of its ORDER.txt, else --order's. The replay builds the row as one cell with J compiles
at once (J = 4 and 16), each started the moment one ends, taking each unit's measured wall time.
At every unit's end it asks fabuild (`fabuild model`, op "progress": costs/time_left.h, the code
the status line runs) what it would say, and compares that with the time really left, by the
costs a build has: guessed (as fabuild guesses them for a row with no record, op "guess":
costs/row_costs.h; --backward-off names the rows whose profile turns BACKWARD off) or recorded
(the measured times themselves). Two answers each time:

  rate     without J (slots 0): the time so far times the cost left over the cost done, what
           fabuild said before the runner handed the progress its grant.
  fabuild  with J: the rest of the build replayed on the slots.

It prints, for each row, J and cost basis, the median, smallest and largest estimate / real time
left over three stretches of the build (0-20 %, 20-50 %, 50-90 % of its units done).
"""

import argparse
import csv
import heapq
import json
import statistics
import subprocess


def read_units(path):
    lines = (line for line in open(path) if not line.startswith("#"))
    return {row["unit"]: float(row["wall_s"]) for row in csv.DictReader(lines, delimiter="\t")}


def ask(fabuild, requests):
    """`fabuild model` on a list of requests (src/costs/model_json.h): its answers, in order."""
    p = subprocess.run([fabuild, "model"], input=json.dumps(requests), capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"fabuild model: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def replay(walls, order, slots, costs, fabuild):
    units = [u for u in order if u in walls] + sorted(u for u in walls if u not in order)
    waiting = list(units)
    end, running = {}, []
    for _ in range(min(slots, len(waiting))):
        u = waiting.pop(0)
        heapq.heappush(running, (walls[u], u))
    ends = []
    while running:
        t, u = heapq.heappop(running)
        end[u] = t
        ends.append((t, u))
        if waiting:
            v = waiting.pop(0)
            heapq.heappush(running, (t + walls[v], v))
    total_time = max(end.values())
    total_cost = sum(costs[u] for u in units)
    done_cost = 0.0
    moments = []
    for i, (now, u) in enumerate(ends[:-1]):
        done_cost += costs[u]
        moment = {"op": "progress", "done": i + 1, "total": len(units), "done_cost": done_cost,
                  "total_cost": total_cost, "elapsed_s": now, "compiled_cost": done_cost,
                  "compiled_ended_s": [t for t, _ in ends[: i + 1]]}
        moments.append((now, moment))
    rates = ask(fabuild, [dict(m, slots=0) for _, m in moments])
    said = ask(fabuild, [dict(m, slots=min(slots, len(units))) for _, m in moments])
    out = []
    for (now, m), r, f in zip(moments, rates, said):
        left = total_time - now
        out.append((m["done"] / len(units), None if r["left_s"] is None else r["left_s"] / left,
                    None if f["left_s"] is None else f["left_s"] / left))
    return total_time, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("units", nargs="+")
    ap.add_argument("--order", default="bench/data/fa2.8.3-setup-order.txt")
    ap.add_argument("--fabuild", default="build/fabuild")
    ap.add_argument("--backward-off", nargs="*", default=[],
                    help="the rows (UNITS.tsv) built with BACKWARD off, which fabuild guesses accordingly")
    args = ap.parse_args()
    default_order = [line.strip().split("/")[-1] for line in open(args.order) if line.strip() and not line.startswith("#")]
    print("row\tJ\tcosts\tbuild\testimate\t0-20 % (median min-max)\t20-50 %\t50-90 %")
    for arg in args.units:
        path, _, own_order = arg.partition("=")
        walls = read_units(path)
        order = default_order
        if own_order:
            order = [line.strip().split("/")[-1] for line in open(own_order) if line.strip() and not line.startswith("#")]
        guessed = ask(args.fabuild, {"op": "guess", "units": sorted(walls),
                                     "backward_off": path in args.backward_off})["costs"]
        for slots in (4, 16):
            for basis in ("guessed", "recorded"):
                costs = {u: walls[u] if basis == "recorded" else guessed[u] for u in walls}
                total, points = replay(walls, order, slots, costs, args.fabuild)
                for k, name in ((1, "rate"), (2, "fabuild")):
                    cols = []
                    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 0.9)):
                        r = [p[k] for p in points if lo <= p[0] < hi and p[k] is not None]
                        cols.append(f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})" if r else "-")
                    print(f"{path.split('/')[-1]}\t{slots}\t{basis}\t{total:.0f} s\t{name}\t" + "\t".join(cols))


if __name__ == "__main__":
    main()
