#!/bin/sh
# Strong scaling over MPI ranks and threads (docs/mpi.md "Scale"): a 64×64 DOR torus and a
# d = 16 hypercube, one fixed run each, on R ranks × T threads; node-cycles per second from
# the JSON, and each rank's exchange cost (ROUTEMU_MPI_STATS). Then the lookahead's gain:
# the torus with links.latency 1, 4 and 20 on 2 ranks. Then memory per rank of hypercubes.
#
# usage: benches/mpi_scaling.sh [scaling|lookahead|memory]...   (default: all)
# Needs Open MPI (docs/mpi.md) and python3. Builds the release binary with the mpi feature.
set -e
cd "$(dirname "$0")/.."
cargo build --release --quiet --features mpi
bin=$PWD/target/release/routemu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
parts=${*:-scaling lookahead memory}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

# launch R T JSON ARGS...: R = 0 runs one process without mpirun.
launch() {
  r=$1; t=$2; json=$3; shift 3
  if [ "$r" = 0 ]; then
    "$bin" "$@" --threads "$t" --json "$json"
  else
    ROUTEMU_MPI_STATS=1 mpirun --oversubscribe -np "$r" "$bin" "$@" --threads "$t" --json "$json"
  fi
}

torus_base="run hw/wormhole-torus-dor.ron --set topology=Torus(k:64,n:2) --replications 1 --warmup 1000 --cycles 4000"
torus="$torus_base --rate 0.005"
cube="run hw/wormhole-hypercube.ron --set topology=Hypercube(dim:16) --rate 0.005 --replications 1 --warmup 200 --cycles 600"

for part in $parts; do
  case $part in
    scaling)
      echo "# strong scaling: network, ranks x threads, node-cycles/s, wall s"
      for net in torus cube; do
        eval "args=\$$net"
        for rt in "0 1" "0 2" "1 1" "2 1" "4 1"; do
          set -- $rt
          # shellcheck disable=SC2086
          launch "$1" "$2" "$tmp/s.json" $args --set experiment.partition_min_nodes=1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
          grep -h "exchanges" "$tmp/err" | head -n 1 || true
          echo "$net ranks=$1 threads=$2 $(field "$tmp/s.json" "round(d['node_cycles_per_second']/1e6, 2), 'M', round(d['wall_seconds'], 2), 's'")"
        done
      done ;;
    lookahead)
      # A light load (0.001), so that 20-cycle links (and credits) do not saturate the torus.
      echo "# lookahead: torus at 0.001 on 2 ranks, links.latency: rank 0's exchanges, cycles stepped (window 5000 + drain)"
      for l in 1 4 20; do
        # shellcheck disable=SC2086
        launch 2 1 "$tmp/l.json" $torus_base --rate 0.001 --set links.latency=$l --set experiment.partition_min_nodes=1 >/dev/null 2>"$tmp/err"
        echo "latency $l: $(grep -h "rank 0 of" "$tmp/err" | head -n 1) cycles $(field "$tmp/l.json" "d['cycles']") wall $(field "$tmp/l.json" "round(d['wall_seconds'], 2)") s"
      done ;;
    memory)
      echo "# memory per rank (max RSS, MB): hypercube d, ranks"
      for d in 18 20 22; do
        for r in 1 2; do
          mpirun --oversubscribe -np $r /usr/bin/time -f "rank RSS %M KB" "$bin" run hw/wormhole-hypercube.ron \
            --set "topology=Hypercube(dim:$d)" --rate 0.001 --replications 1 --warmup 50 --cycles 100 \
            --json /dev/null 2>&1 >/dev/null | grep "rank RSS" | sed "s/^/d=$d ranks=$r /"
        done
      done ;;
    *) echo "unknown part $part (scaling, lookahead, memory)" >&2; exit 1 ;;
  esac
done
