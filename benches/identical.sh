#!/bin/sh
# Results identical between two binaries: the check behind every "results identical" of
# docs/speed.md. Runs the same scenarios with NEW and OLD and compares
#   - the run JSON, every key but the timings (`wall_seconds`, `node_cycles_per_second`),
#     the command line (`command`) and the build (`routemu.commit`), at full precision;
#   - the per-message logs (`--message-log`), byte for byte.
# Scenarios: every preset of hw/ with 1 and 2 threads; the BookSim torus, dragonfly and
# flattened butterfly with the SIF/SOF allocators x round-robin, matrix and fixed arbiters
# at two loads; iSLIP and wavefront, speedup 2 and a 2-connection network interface;
# PortLevel with every arbiter; the adaptive torus and a UGAL dragonfly;
# request/reply traffic with sequential and parallel injection; per-link observation;
# two replays (fft-16, testbgp); the 64x64 booksim torus.
#
# usage: benches/identical.sh NEW_BINARY OLD_BINARY [QUICK]
#   QUICK (any value): the presets with one thread and the BookSim variants only.
# Prints one line per scenario that differs and a count; exits 1 when any differs or
# fails to run.
set -u
cd "$(dirname "$0")/.."
new=$1; old=$2; quick=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0; bad=0
strip() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("wall_seconds", "node_cycles_per_second", "command"):
    d.pop(k, None)
d.get("routemu", {}).pop("commit", None)
print(json.dumps(d, sort_keys=True))
PY
}
# check NAME ARGS...: one scenario (a routemu command line after the binary).
check() {
    name=$1; shift
    runs=$((runs + 1))
    for side in new old; do
        bin=$new; [ $side = old ] && bin=$old
        if ! "$bin" "$@" --json "$tmp/$side.json" >"$tmp/$side.out" 2>&1; then
            echo "FAILED ($side): $name: $*"; tail -3 "$tmp/$side.out"; bad=$((bad + 1)); return
        fi
        strip "$tmp/$side.json" >"$tmp/$side.norm"
    done
    if ! cmp -s "$tmp/new.norm" "$tmp/old.norm"; then
        echo "DIFFERS: $name: $*"; bad=$((bad + 1))
    fi
}
# log NAME ARGS...: a run's per-message log, byte for byte.
log() {
    name=$1; shift
    runs=$((runs + 1))
    "$new" "$@" --message-log "$tmp/new.csv" >/dev/null 2>&1 &&
        "$old" "$@" --message-log "$tmp/old.csv" >/dev/null 2>&1 &&
        cmp -s "$tmp/new.csv" "$tmp/old.csv" || { echo "LOG DIFFERS: $name: $*"; bad=$((bad + 1)); }
}
short="--replications 2 --warmup 2000 --cycles 6000"
for hw in hw/*.ron; do
    check "$(basename "$hw")" run "$hw" $short --threads 1
    [ -n "$quick" ] || check "$(basename "$hw") 2 threads" run "$hw" $short --threads 2
done
for net in booksim-min-torus8 dragonfly-booksim flatfly-booksim; do
    for alloc in SeparableInputFirst SeparableOutputFirst; do
        for arb in RoundRobin Matrix FixedPriority; do
            for load in 0.05 0.4; do
                check "$net $alloc $arb $load" run "hw/$net.ron" --load $load --replications 1 \
                    --warmup 1000 --cycles 4000 --set router.allocator=$alloc --set router.arbiter=$arb
            done
        done
    done
done
for alloc in 'ISlip(iterations: 2)' Wavefront; do
    for load in 0.05 0.4; do
        check "torus8 $alloc $load" run hw/booksim-min-torus8.ron --load $load --replications 1 \
            --warmup 1000 --cycles 4000 --set "router.allocator=$alloc"
        check "torus8 speedup 2 $alloc $load" run hw/booksim-min-torus8.ron --load $load \
            --replications 1 --warmup 1000 --cycles 4000 --set "router.allocator=$alloc" \
            --set router.speedup=2
    done
done
for alloc in SeparableInputFirst SeparableOutputFirst; do
    check "torus8 switch stage $alloc" run hw/booksim-min-torus8.ron --load 0.3 --replications 1 \
        --warmup 1000 --cycles 4000 --set router.allocator=$alloc --set router.pipeline.switch_alloc=2 \
        --set router.pipeline.speculative=false
    check "torus8 speedup 2 $alloc" run hw/booksim-min-torus8.ron --load 0.4 --replications 1 \
        --warmup 1000 --cycles 4000 --set router.allocator=$alloc --set router.speedup=2
    check "torus8 ni 2 $alloc" run hw/booksim-min-torus8.ron --load 0.4 --replications 1 \
        --warmup 1000 --cycles 4000 --set router.allocator=$alloc --set 'router.ni.injection=Some(2)' \
        --set 'router.ni.ejection=Some(2)' --set links.width=1
done
for arb in RoundRobin Matrix FixedPriority; do
    check "torus8 PortLevel $arb" run hw/booksim-min-torus8.ron --load 0.3 --replications 1 \
        --warmup 1000 --cycles 4000 --set router.allocator=PortLevel --set router.arbiter=$arb
done
[ -n "$quick" ] && { echo "$bad of $runs scenarios differ"; [ $bad -eq 0 ]; exit; }
for load in 0.1 0.5; do
    check "adaptive torus $load" run hw/wormhole-torus-adaptive.ron --load $load $short
    check "UGAL dragonfly $load" run hw/dragonfly-booksim.ron --load $load $short \
        --set switching.routing=UgalLocal --set router.vcs=3
done
for seq in true false; do
    check "request/reply sequential=$seq" run hw/booksim-min-torus8.ron --load 0.2 $short \
        --set 'workload.reply=Some((length: Constant(flits: 4), writes: Some((fraction: 0.3, request: Constant(flits: 8), reply: Constant(flits: 2)))))' --set router.vcs=4 \
        --set router.ni.sequential_injection=$seq
done
check "per-link torus" run hw/booksim-min-torus8.ron --load 0.3 $short --per-link
check "per-link dragonfly" run hw/dragonfly-booksim.ron --load 0.3 $short --per-link
check "replay fft-16" replay hw/wormhole-torus-dor.ron --trace traces/generated/fft-16.meta
check "replay testbgp" replay hw/wormhole-torus-dor.ron --trace traces/dumpi-sst/testbgp.meta
check "torus64" run hw/booksim-min-torus16.ron --set topology.k=64 --load 0.02 \
    --replications 1 --warmup 500 --cycles 1500
log "message log wormhole" run hw/wormhole-torus-dor.ron $short
log "message log circuit" run hw/circuit-hold.ron $short
echo "$bad of $runs scenarios differ"
[ $bad -eq 0 ]
