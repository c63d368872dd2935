#!/bin/sh
# Speed against BookSim2, the procedure of docs/speed.md ("Against BookSim2"): the same
# network, load and number of cycles on both, single thread, interleaved pairs, CPU time
# (user + system, from /usr/bin/time), start-up included on both sides.
#
# usage: BOOKSIM=/path/to/booksim benches/booksim_speed.sh NET FLITS [PAIRS] [PERIOD]
#   NET    torus8 | torus16 | torus64 | cube8 (the hw/booksim-min-*.ron presets; torus64
#          is booksim-min-torus16 with k = 64)
#   FLITS  offered load in flits/node/cycle (packets are 12 flits)
#   PAIRS  interleaved pairs (default 5)
#   PERIOD BookSim's sample_period (default 10000); both run 4 periods: BookSim one warm-up
#          period and at most 3 samples (sim_type = throughput: no drain), routemu
#          --warmup PERIOD --cycles 3*PERIOD, 1 replication. BookSim's "Time taken" is
#          checked against 4*PERIOD (plus the few cycles its last packets take to drain).
# Environment: ROUTEMU (default target/release/routemu), BOOKSIM (default
# /tmp/booksim2/src/booksim). Prints one line per pair and the median ratio
# BookSim CPU / routemu CPU with its range, and the load average before and after.
set -e
cd "$(dirname "$0")/.."
net=$1; flits=$2; pairs=${3:-5}; period=${4:-10000}
rm_bin=${ROUTEMU:-target/release/routemu}
bs_bin=${BOOKSIM:-/tmp/booksim2/src/booksim}
[ -x "$rm_bin" ] || { echo "no routemu binary at $rm_bin (cargo build --release)" >&2; exit 1; }
[ -x "$bs_bin" ] || { echo "no BookSim binary at $bs_bin (docs/booksim.md, Setup)" >&2; exit 1; }
case $net in
  torus8)  hw=hw/booksim-min-torus8.ron;  topo="topology = torus; k = 8; n = 2;"; set="" ;;
  torus16) hw=hw/booksim-min-torus16.ron; topo="topology = torus; k = 16; n = 2;"; set="" ;;
  torus64) hw=hw/booksim-min-torus16.ron; topo="topology = torus; k = 64; n = 2;"; set="--set topology.k=64" ;;
  cube8)   hw=hw/booksim-min-cube8.ron;   topo="topology = mesh; k = 2; n = 8;"; set="" ;;
  *) echo "unknown network $net (torus8, torus16, torus64, cube8)" >&2; exit 1 ;;
esac
rate=$(python3 -c "print($flits / 12)")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/b.cfg" <<CFG
$topo
routing_function = dim_order; router = iq; use_noc_latency = 0;
num_vcs = 4; vc_buf_size = 8; wait_for_tail_credit = 0;
routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1; speculative = 1;
st_final_delay = 1; credit_delay = 0;
vc_allocator = separable_input_first; sw_allocator = separable_input_first; alloc_iters = 1;
traffic = uniform; packet_size = 12; injection_process = bernoulli;
injection_rate = $rate; sim_type = throughput;
warmup_periods = 1; sample_period = $period; max_samples = 4; seed = 1;
CFG
cpu() { python3 -c "import sys; u,s=open(sys.argv[1]).read().split()[-2:]; print(round(float(u)+float(s), 2))" "$1"; }
echo "# $net at $flits flits/node/cycle, $((4 * period)) cycles, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# routemu: $rm_bin run $hw $set --rate $rate --replications 1 --warmup $period --cycles $((3 * period)) --threads 1"
i=0
while [ $i -lt "$pairs" ]; do
  /usr/bin/time -f "%U %S" -o "$tmp/rt" "$rm_bin" run $hw $set --rate "$rate" --replications 1 \
      --warmup "$period" --cycles $((3 * period)) --threads 1 --json "$tmp/r.json" >/dev/null 2>&1
  # BookSim's main returns its simulation's verdict, not success: its exit status is ignored.
  /usr/bin/time -f "%U %S" -o "$tmp/bt" "$bs_bin" "$tmp/b.cfg" > "$tmp/b.out" 2>&1 || true
  taken=$(sed -n 's/^Time taken is \([0-9]*\) cycles/\1/p' "$tmp/b.out")
  # A throughput run drains the packets in flight after its last sample: tens of cycles.
  [ -n "$taken" ] && [ "$taken" -ge $((4 * period)) ] && [ "$taken" -lt $((4 * period + period / 10)) ] ||
    { echo "BookSim ran ${taken:-no} cycles, not about $((4 * period)): see its output below" >&2; cat "$tmp/b.out" >&2; exit 1; }
  r=$(cpu "$tmp/rt"); b=$(cpu "$tmp/bt")
  echo "pair $((i + 1)): routemu $r s, BookSim $b s, ratio $(python3 -c "print(round($b / $r, 2))")"
  echo "$b $r" >> "$tmp/pairs"
  i=$((i + 1))
done
python3 - "$tmp/pairs" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
ratios = sorted(b / r for b, r in rows)
print("median BookSim/routemu %.1fx (range %.1f-%.1f over %d pairs); routemu %.2f s, BookSim %.2f s (medians)"
      % (statistics.median(ratios), ratios[0], ratios[-1], len(ratios),
         statistics.median(r for _, r in rows), statistics.median(b for b, _ in rows)))
PY
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
