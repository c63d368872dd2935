#!/bin/sh
# routemu's side of the BookSim2 comparison in docs/booksim.md: the latency curve and the
# saturation throughput of the three hw/booksim-min-*.ron presets. BookSim's side is run by
# hand with the configuration files given in that page.
#
# usage: benches/booksim_compare.sh [torus8|torus16|cube8]...   (default: all three)
# Needs python3 (to read the JSON reports). Builds the release binary first.
set -e
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/routemu
nets=${*:-torus8 cube8 torus16}
reps=${REPS:-3}

field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

for net in $nets; do
  case $net in
    torus8)  loads="0.1 0.2 0.3 0.4 0.45 0.48"; over=0.7 ;;
    cube8)   loads="0.1 0.3 0.5 0.6 0.7"; over=1.0 ;;
    torus16) loads="0.05 0.1 0.15 0.2 0.24"; over=0.4 ;;
    *) echo "unknown network $net (torus8, torus16, cube8)" >&2; exit 1 ;;
  esac
  hw=hw/booksim-min-$net.ron
  echo "# $hw: offered flits/node/cycle, mean latency (cycles) ± ci95, accepted flits/node/cycle"
  for f in $loads; do
    r=$(python3 -c "print($f / 12)")
    $bin run $hw --rate "$r" --replications "$reps" --warmup 10000 --cycles 30000 --json - 2>/dev/null |
      field "'$net $f', round(d['latency']['mean'], 2), '±', round(d['latency']['ci95'] or 0, 2), round(d['throughput']['accepted'], 4), 'saturated' if d['saturated'] else ''"
  done
  # Saturation: offered well past it, sources' queues allowed to grow for the whole window.
  r=$(python3 -c "print($over / 12)")
  $bin run $hw --rate "$r" --replications "$reps" --warmup 10000 --cycles 20000 \
      --set experiment.saturation_backlog=1e9 --json - 2>/dev/null |
    field "'$net saturation (offered $over):', round(d['throughput']['accepted'], 4), '±', round(d['throughput']['accepted_ci95'] or 0, 4)"
done
