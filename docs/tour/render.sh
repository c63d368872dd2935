#!/bin/sh
# The README tour's figures, one of each kind, rendered as PNG:
#
#   latency-vs-load.png      mean latency against the injection rate, with the model's
#                            curve and where the model saturates (8×8 torus, DOR)
#   accepted-vs-offered.png  accepted throughput against the offered load, past
#                            saturation: the plateau, saturated points ringed, y = x
#   time-series.png          accepted throughput per interval of one run, the end of
#                            the warm-up marked
#   heatmap.png              link utilisation drawn on the 4×4 mesh
#
# Usage: ROUTEMU=target/release/routemu docs/tour/render.sh OUT_DIR
# From the repository root. TOUR_QUICK=1 uses settings small enough for a test (a few
# seconds with a debug build); the committed figures in docs/figures/ are rendered
# without it, with a release build:
#
#   cargo build --release && ROUTEMU=target/release/routemu docs/tour/render.sh docs/figures
set -eu
: "${ROUTEMU:?set ROUTEMU to the routemu binary}"
out=${1:?usage: render.sh OUT_DIR}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${TOUR_QUICK:-0}" = 1 ]; then
    run="--replications 2 --warmup 100 --cycles 600"
    torus_rates=0.004:0.024:0.01
    mesh_rates=0.02:0.2:0.09
    interval=100
else
    run="--replications 5 --warmup 2000 --cycles 20000"
    torus_rates=0.002:0.026:0.002
    mesh_rates=0.02:0.2:0.02
    interval=1000
fi

# Latency against load with the model (paper 004's DOR wormhole model on the 8×8 torus).
# shellcheck disable=SC2086
"$ROUTEMU" sweep hw/wormhole-torus-dor.ron $run --param "workload.rate=$torus_rates" \
    --y latency --plot "$out/latency-vs-load.png" >/dev/null
# Accepted against offered load past saturation: the 4×4 mesh.
# shellcheck disable=SC2086
"$ROUTEMU" sweep hw/wormhole-mesh-dor.ron --set topology.k=4 $run \
    --param "workload.rate=$mesh_rates" --y throughput.accepted --x offered \
    --csv "$tmp/mesh.csv" --plot "$out/accepted-vs-offered.png" >/dev/null
# A time series of one run near saturation, redrawn from its CSV.
# shellcheck disable=SC2086
"$ROUTEMU" run hw/wormhole-mesh-dor.ron --set topology.k=4 --set workload.rate=0.04 $run \
    --interval "$interval" --series "$tmp/series.csv" >/dev/null
"$ROUTEMU" plot "$tmp/series.csv" --y accepted --out "$out/time-series.png" 2>/dev/null
# Where the links are busy: the heat map of the same mesh.
# shellcheck disable=SC2086
"$ROUTEMU" run hw/wormhole-mesh-dor.ron --set topology.k=4 --set workload.rate=0.04 $run \
    --heatmap "$out/heatmap.png" >/dev/null
