#!/bin/sh
# routemu's side of the BookSim2 comparisons in docs/dragonfly.md: hw/dragonfly-booksim.ron
# and hw/flatfly-booksim.ron (minimal routing), the flattened butterfly's knob table, UGAL
# at k = 2 (through a router on 4 VCs and through a group on 3) and the k = 4 dragonfly.
# BookSim's side is run by hand with the configuration files that page gives.
#
# usage: benches/dragonfly_compare.sh [minimal|knobs|ugal|k4]...   (default: all four)
# EXTRA="--set a=b ..." adds settings to every run (e.g. EXTRA="--set
# router.ni.credit_latency=0" for the source before it waited for its credits).
# Needs python3 (to read the JSON reports). Builds the release binary first unless BIN
# names one.
set -e
cd "$(dirname "$0")/.."
if [ -z "$BIN" ]; then
  cargo build --release --quiet
  BIN=target/release/routemu
fi
parts=${*:-minimal knobs ugal k4}
reps=${REPS:-3}

# point LABEL HW LOAD [--set ...]: mean latency ± ci95 and accepted throughput at LOAD
# flits/terminal/cycle.
point() {
  label=$1; hw=$2; load=$3; shift 3
  r=$(python3 -c "print($load / 12)")
  $BIN run "$hw" --rate "$r" --replications "$reps" --warmup 10000 --cycles 30000 "$@" $EXTRA --json - 2>/dev/null |
    python3 -c "import json,sys; d=json.load(sys.stdin); print('$label', 'latency at $load:', round(d['latency']['mean'], 2), '±', round(d['latency']['ci95'] or 0, 2), 'accepted', round(d['throughput']['accepted'], 4), 'saturated' if d['saturated'] else '')"
}

# sat LABEL HW LOAD [--set ...]: accepted throughput at LOAD, sources backlogged.
sat() {
  label=$1; hw=$2; load=$3; shift 3
  r=$(python3 -c "print($load / 12)")
  $BIN run "$hw" --rate "$r" --replications "$reps" --warmup 10000 --cycles 20000 \
      --set experiment.saturation_backlog=1e9 "$@" $EXTRA --json - 2>/dev/null |
    python3 -c "import json,sys; d=json.load(sys.stdin); print('$label', 'accepted at $load:', round(d['throughput']['accepted'], 4), '±', round(d['throughput']['accepted_ci95'] or 0, 4))"
}

D=hw/dragonfly-booksim.ron
F=hw/flatfly-booksim.ron
for part in $parts; do
  case $part in
    minimal)
      echo "# minimal routing, k = 2 dragonfly and k = 4, n = 2, c = 4 flattened butterfly"
      point "dragonfly uniform" $D 0.1
      point "dragonfly uniform" $D 0.3
      sat "dragonfly uniform" $D 0.9
      point "dragonfly GroupShift" $D 0.03 --pattern groupshift
      point "dragonfly GroupShift" $D 0.08 --pattern groupshift
      sat "dragonfly GroupShift" $D 0.5 --pattern groupshift
      point "flatfly uniform" $F 0.1
      point "flatfly uniform" $F 0.3
      sat "flatfly uniform" $F 0.9
      ;;
    knobs)
      echo "# the flattened butterfly's knobs, accepted at offered 0.9, 2 replications"
      all=$reps; reps=2
      # Without concentration the router's own local port is the terminal: its injection
      # and ejection channels are hw/booksim-min-torus8.ron's (2 cycles each way).
      c1="router.ni.injection_latency=2"
      e1="router.ni.ejection_latency=2"
      n2="topology=FlattenedButterfly(k:4,n:2,c:1)"
      n1="topology=FlattenedButterfly(k:4,n:1,c:1)"
      sat "k4n2c1 preset" $F 0.9 --set "$n2" --set $c1 --set $e1
      sat "k4n2c1 buffers 64" $F 0.9 --set "$n2" --set $c1 --set $e1 --set router.buffer_flits=64
      sat "k4n2c1 1-flit packets" $F 10.8 --set "$n2" --set $c1 --set $e1 --length 1
      sat "k4n2c1 1 VC 64 flits" $F 0.9 --set "$n2" --set $c1 --set $e1 --set router.vcs=1 --set router.buffer_flits=64
      sat "k4n2c1 islip" $F 0.9 --set "$n2" --set $c1 --set $e1 --set 'router.allocator=ISlip(iterations:1)'
      sat "k4n2c1 separable output-first" $F 0.9 --set "$n2" --set $c1 --set $e1 --set router.allocator=SeparableOutputFirst
      sat "k4n1c1 preset" $F 0.9 --set "$n1" --set $c1 --set $e1
      sat "k4n1c1 1 VC dma 4" $F 0.9 --set "$n1" --set $c1 --set $e1 --set router.vcs=1
      sat "k4n1c1 1 VC dma 1" $F 0.9 --set "$n1" --set $c1 --set $e1 --set router.vcs=1 --set "router.dma=Some(1)"
      for e in 1 2 3 4 8; do
        sat "k4n1c1 4 VCs dma $e" $F 0.9 --set "$n1" --set $c1 --set $e1 --set "router.dma=Some($e)"
      done
      reps=$all
      ;;
    ugal)
      echo "# UgalLocal, k = 2: through a router on 4 VCs, then through a group on 3"
      for via in "Router 4" "Group 3"; do
        set -- $via
        u="--set switching.routing=UgalLocal --set router.vcs=$2 --set switching.valiant_intermediate=$1"
        point "ugal $1 uniform" $D 0.1 $u
        point "ugal $1 uniform" $D 0.3 $u
        sat "ugal $1 uniform" $D 0.9 $u
        point "ugal $1 GroupShift" $D 0.1 $u --pattern groupshift
        point "ugal $1 GroupShift" $D 0.2 $u --pattern groupshift
        sat "ugal $1 GroupShift" $D 0.26 $u --pattern groupshift
        sat "ugal $1 GroupShift" $D 0.9 $u --pattern groupshift
      done
      ;;
    k4)
      echo "# k = 4 dragonfly (264 routers, 1,056 terminals)"
      k4="topology=Dragonfly(p: 4, a: 8, h: 4)"
      u="--set switching.routing=UgalLocal --set router.vcs=4 --set switching.valiant_intermediate=Router"
      point "k4 minimal uniform" $D 0.1 --set "$k4"
      sat "k4 minimal uniform" $D 0.9 --set "$k4"
      point "k4 minimal GroupShift" $D 0.02 --set "$k4" --pattern groupshift
      sat "k4 minimal GroupShift" $D 0.5 --set "$k4" --pattern groupshift
      point "k4 ugal uniform" $D 0.1 --set "$k4" $u
      sat "k4 ugal uniform" $D 0.9 --set "$k4" $u
      point "k4 ugal GroupShift" $D 0.1 --set "$k4" $u --pattern groupshift
      point "k4 ugal GroupShift" $D 0.15 --set "$k4" $u --pattern groupshift
      sat "k4 ugal GroupShift" $D 0.2 --set "$k4" $u --pattern groupshift
      sat "k4 ugal GroupShift" $D 0.3 --set "$k4" $u --pattern groupshift
      ;;
    *) echo "unknown part $part (minimal, knobs, ugal, k4)" >&2; exit 1 ;;
  esac
done
