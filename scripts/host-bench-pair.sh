#!/usr/bin/env bash
# Two builds of `host` side by side: `host bench --net NET` (one thread, fixed depth, so both
# search the same nodes) in interleaved rounds, each pinned to one core, even rounds backwards,
# so that a slow spell of a shared machine hits both alike. Prints each round's nps and, per
# network, the median (and range) of the rounds' ratios NEW / BASE, and checks that both
# searched the same number of nodes.
#
#   usage: scripts/host-bench-pair.sh BASE_HOST NEW_HOST ROUNDS NET...   (NET "-": built-in)
set -euo pipefail
if [ $# -lt 4 ]; then
    sed -n '7p' "$0" | sed 's/^# *//' >&2
    exit 2
fi
BASE=$1; NEW=$2; ROUNDS=$3; shift 3
CORE=${CORE:-1}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for r in $(seq 1 "$ROUNDS"); do
    for net in "$@"; do
        args=(bench); [ "$net" = "-" ] || args+=(--net "$net")
        order="base new"; [ $((r % 2)) -eq 0 ] && order="new base"
        for who in $order; do
            bin=$NEW; [ "$who" = base ] && bin=$BASE
            line=$(taskset -c "$CORE" "$bin" "${args[@]}" 2>&1 | tail -1)
            # "NODES nodes NPS nps"
            echo "$r $(basename "$net") $who $line" | tee -a "$results" >&2
        done
    done
done
python3 - "$results" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(dict)
nodes = collections.defaultdict(set)
for line in open(sys.argv[1]):
    r, net, who, n, _, nps, _ = line.split()
    rows[(net, r)][who] = int(nps)
    nodes[net].add(n)
print("| network | nodes | base nps (median) | new nps (median) | new / base, median of rounds (range) |")
print("| --- | ---: | ---: | ---: | --- |")
bad = False
for net in dict.fromkeys(k[0] for k in rows):
    ratios = [v["new"] / v["base"] for (n, _), v in rows.items() if n == net]
    base = statistics.median(v["base"] for (n, _), v in rows.items() if n == net)
    new = statistics.median(v["new"] for (n, _), v in rows.items() if n == net)
    same = len(nodes[net]) == 1
    bad |= not same
    print(f"| {net} | {' / '.join(sorted(nodes[net]))} | {base:,.0f} | {new:,.0f} | "
          f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) |")
sys.exit(1 if bad else 0)
PY
