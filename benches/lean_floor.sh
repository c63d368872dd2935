#!/bin/sh
# The speed floor of docs/speed.md ("How fast this workload can be simulated"): builds
# benches/floor/lean_torus.rs (a stand-alone lean simulator of the booksim-min torus
# workload, not part of the crate) with rustc in a scratch directory, for the generic
# x86-64 target routemu and BookSim are built for (NATIVE=1: for this CPU), and times it
# and routemu on the same runs as benches/booksim_speed.sh: CPU seconds (user + system),
# the median of RUNS runs each, interleaved.
#
# usage: benches/lean_floor.sh [RUNS]      (default 3)
# Environment: ROUTEMU (default target/release/routemu), NATIVE.
set -e
cd "$(dirname "$0")/.."
runs=${1:-3}
rm_bin=${ROUTEMU:-target/release/routemu}
[ -x "$rm_bin" ] || { echo "no routemu binary at $rm_bin (cargo build --release)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-C opt-level=3 -C codegen-units=1 -C panic=abort"
[ -n "${NATIVE:-}" ] && flags="$flags -C target-cpu=native"
rustc --edition 2021 $flags -o "$tmp/lean" benches/floor/lean_torus.rs
cpu() { python3 -c "import sys; u,s=open(sys.argv[1]).read().split()[-2:]; print(round(float(u)+float(s), 3))" "$1"; }
median() { python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
echo "# lean floor ($flags) against $rm_bin, $runs runs each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# network  flits/node/cycle  cycles  lean_s  routemu_s  routemu/lean  lean_latency  routemu_latency"
for case in "8 torus8 0.1 200000" "8 torus8 0.48 200000" "16 torus16 0.1 40000" "16 torus16 0.2 40000" "16 torus16 0.23 40000"; do
    set -- $case
    k=$1; net=$2; load=$3; cycles=$4
    rate=$(python3 -c "print($load / 12)")
    period=$((cycles / 4))
    l=""; r=""
    i=0
    while [ $i -lt "$runs" ]; do
        /usr/bin/time -f "%U %S" -o "$tmp/lt" "$tmp/lean" "$k" "$load" "$cycles" 1 > "$tmp/lo"
        /usr/bin/time -f "%U %S" -o "$tmp/rt" "$rm_bin" run "hw/booksim-min-$net.ron" --rate "$rate" \
            --replications 1 --warmup "$period" --cycles $((3 * period)) --threads 1 \
            --json "$tmp/r.json" > /dev/null 2>&1
        l="$l $(cpu "$tmp/lt")"; r="$r $(cpu "$tmp/rt")"
        i=$((i + 1))
    done
    lm=$(median $l); rmed=$(median $r)
    llat=$(sed -n 's/.*mean_pkt_latency=\([0-9.]*\).*/\1/p' "$tmp/lo")
    rlat=$(python3 -c "import json; print(round(json.load(open('$tmp/r.json'))['latency']['mean'], 2))")
    echo "${k}x$k  $load  $cycles  $lm  $rmed  $(python3 -c "print(round($rmed / $lm, 2))")  $llat  $rlat"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
