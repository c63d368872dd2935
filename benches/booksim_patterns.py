#!/usr/bin/env python3
"""routemu against BookSim2 for the what-if vocabulary (docs/booksim.md, "Patterns, routings
and allocators against BookSim2"): for every row, the saturation throughput (accepted flits
per node per cycle at offered 0.7, sources backlogged) and the mean packet latency at two
loads, both simulators, as a markdown table.

usage: benches/booksim_patterns.py BOOKSIM [--rows NAME[,NAME..]] [--cache FILE]
                                   [--booksim-only] [--reps N]

  BOOKSIM        the booksim binary, built outside the repository (docs/booksim.md, "Setup")
  --rows         row groups to run (default: all): mesh8-dor, torus8-dor, mesh8-xyyx,
                 mesh8-valiant, mesh8-romm, mesh8-minadapt, torus8-minadapt, mesh8-alloc
  --cache        BookSim's answers, one JSON line per run (default
                 target/booksim-cache.jsonl): a table is re-printed after a routemu change
                 without running BookSim again
  --booksim-only run BookSim's side only (fills the cache)
  --reps         routemu replications per point (default 3)

The loads: S is the smaller of the pattern's channel-load bound (routemu's
`pattern_bound`) and BookSim's saturation throughput; the low load is 0.1 flits/node/cycle
(0.3 S when 0.1 is above 0.4 S) and the high load 0.7 S, both rounded to 3 decimals.
BookSim: saturation and latency with seeds 1 and 2. routemu: `routemu run
hw/booksim-min-NET.ron` with the row's `--set`s, `--replications N --warmup 10000
--cycles 30000` (saturation: `--cycles 20000 --set experiment.saturation_backlog=1e9`),
the mean ± its 95% interval.
`randperm` is compared as a distribution over permutations: each simulator draws its
permutation from its own seed (BookSim's `perm_seed`, routemu's `--seed`), so both sides
run seeds 1-4 (routemu one replication each) and the table gives the mean over the four
permutations and, for routemu, the range; the high load is 0.5 S there, below every
drawn permutation's own bound.
Needs the release binary (`cargo build --release`).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUTEMU = os.path.join(ROOT, "target", "release", "routemu")

# BookSim's configuration for the booksim-min presets (docs/booksim.md, "Setup").
BASE = dict(topology="torus", k="8", n="2", routing_function="dim_order", router="iq",
            use_noc_latency="0", num_vcs="4", vc_buf_size="8", wait_for_tail_credit="0",
            routing_delay="0", vc_alloc_delay="1", sw_alloc_delay="1", speculative="1",
            st_final_delay="1", credit_delay="0", vc_allocator="separable_input_first",
            sw_allocator="separable_input_first", alloc_iters="1", traffic="uniform",
            packet_size="12", injection_process="bernoulli", injection_rate="0.001",
            sim_type="latency", warmup_periods="3", sample_period="10000",
            max_samples="10", seed="1")

NETS = {
    "mesh8": ("hw/booksim-min-mesh8.ron",
              dict(topology="mesh", vc_allocator="islip", sw_allocator="islip")),
    "torus8": ("hw/booksim-min-torus8.ron", {}),
}

# routemu pattern (fixed points sending to themselves, as BookSim's) → BookSim traffic.
PATTERNS = {"uniform": ("uniform:self", "uniform"), "transpose": ("transpose:self", "transpose"),
            "bitcomp": ("bitcomp:self", "bitcomp"), "bitrev": ("bitrev:self", "bitrev"),
            "shuffle": ("shuffle:self", "shuffle"), "tornado": ("tornado:self", "tornado"),
            "neighbor": ("neighbor:self", "neighbor"), "randperm": ("randperm:self", "randperm")}
ALL = list(PATTERNS)

ALLOCATORS = {"SeparableInputFirst": "separable_input_first",
              "SeparableOutputFirst": "separable_output_first",
              "ISlip(iterations:2)": "islip(2)", "Wavefront": "wavefront"}

# name → (network, routemu --set list, BookSim settings, patterns, label)
ROWS = {
    "mesh8-dor": [("mesh8", [], {}, ALL, "DimensionOrder / dim_order")],
    "torus8-dor": [("torus8", [], {}, ALL, "DimensionOrder / dim_order")],
    "mesh8-xyyx": [("mesh8", ["switching.routing=XyYx"], dict(routing_function="xy_yx"),
                    ["uniform", "transpose", "tornado"], "XyYx / xy_yx")],
    # Valiant under transpose: BookSim's throughput run did not end in 24 minutes.
    "mesh8-valiant": [("mesh8", ["switching.routing=Valiant"],
                       dict(routing_function="valiant"),
                       ["uniform", "tornado"], "Valiant / valiant")],
    "mesh8-romm": [("mesh8", ["switching.routing=Romm"], dict(routing_function="romm"),
                    ["uniform", "transpose", "tornado"], "Romm / romm")],
    "mesh8-minadapt": [("mesh8", ["switching.routing=MinAdapt"],
                        dict(routing_function="min_adapt"), ["uniform", "transpose"],
                        "MinAdapt / min_adapt")],
    "torus8-minadapt": [("torus8", ["switching.routing=MinAdapt"],
                         dict(routing_function="min_adapt"), ["uniform", "tornado"],
                         "MinAdapt / min_adapt")],
    "mesh8-alloc": [("mesh8", ["router.allocator=" + a, "router.arbiter=RoundRobin"],
                     dict(vc_allocator=b, sw_allocator=b), ["uniform"],
                     f"DimensionOrder, `{a}` / {b}") for a, b in ALLOCATORS.items()],
}

SEEDS = (1, 2)
# Seconds a BookSim run may take; the table marks a run cut at this limit (BookSim's
# throughput run of Valiant on the mesh under transpose was still running after 24 minutes).
BOOKSIM_TIMEOUT = 420
PERM_SEEDS = (1, 2, 3, 4)


def booksim_cfg(net, extra, pattern, load, seed, sat):
    cfg = dict(BASE)
    cfg.update(NETS[net][1])
    cfg.update(extra)
    traffic = PATTERNS[pattern][1]
    cfg["traffic"] = traffic
    if traffic == "randperm":
        cfg["perm_seed"] = str(seed)
    cfg["injection_rate"] = "%g" % (load / 12)
    cfg["seed"] = str(seed)
    if sat:
        cfg["sim_type"] = "throughput"
    return cfg


class Cache:
    def __init__(self, path):
        self.path = path
        self.runs = {}
        if os.path.exists(path):
            for line in open(path):
                d = json.loads(line)
                self.runs[self.key(d["cfg"])] = d

    @staticmethod
    def key(cfg):
        return json.dumps(cfg, sort_keys=True)

    def get(self, booksim, cfg):
        k = self.key(cfg)
        if k not in self.runs:
            self.runs[k] = dict(cfg=cfg, **run_booksim(booksim, cfg))
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            with open(self.path, "a") as f:
                f.write(json.dumps(self.runs[k]) + "\n")
            print(f"  booksim {cfg['topology']} {cfg['routing_function']} {cfg['traffic']} "
                  f"{cfg['vc_allocator']} rate {cfg['injection_rate']} seed {cfg['seed']} "
                  f"{cfg['sim_type']}: latency {self.runs[k]['latency']} accepted "
                  f"{self.runs[k]['accepted']}", file=sys.stderr, flush=True)
        return self.runs[k]


def run_booksim(booksim, cfg):
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as f:
        f.write("".join(f"{k} = {v};\n" for k, v in cfg.items()))
    try:
        out = subprocess.run([booksim, f.name], capture_output=True, text=True,
                             timeout=BOOKSIM_TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        return dict(latency=None, accepted=None, unstable=False, timeout=BOOKSIM_TIMEOUT)
    finally:
        os.unlink(f.name)

    def last(prefix):
        lines = [l for l in out.splitlines() if l.startswith(prefix)]
        return float(lines[-1].split("=")[1].split()[0]) if lines else None

    return dict(latency=last("Packet latency average"),
                accepted=last("Accepted flit rate average"),
                unstable="unstable" in out.lower() or "deadlock" in out.lower())


def measure(net, sets, pattern, load, sat, reps):
    """routemu's mean (latency, or accepted throughput when `sat`), and a text for the
    cell: mean ± 95% interval, or for `randperm` the mean over four permutations and
    their range; and whether a run was saturated."""
    field = (lambda d: d["throughput"]["accepted"]) if sat else (lambda d: d["latency"]["mean"])
    ci = (lambda d: d["throughput"]["accepted_ci95"]) if sat else (lambda d: d["latency"]["ci95"])
    fmt = "{:.4f}" if sat else "{:.2f}"
    if pattern != "randperm":
        d = routemu(net, sets, pattern, load, sat, reps)
        mark = " (saturated)" if not sat and d["saturated"] else ""
        return field(d), f"{fmt.format(field(d))} ± {fmt.format(ci(d) or 0)}{mark}"
    runs = [routemu(net, sets, pattern, load, sat, 1, seed=s) for s in PERM_SEEDS]
    vals = [field(d) for d in runs]
    mark = " (saturated)" if not sat and any(d["saturated"] for d in runs) else ""
    m = statistics.mean(vals)
    return m, f"{fmt.format(m)} ({fmt.format(min(vals))}–{fmt.format(max(vals))}){mark}"


def routemu(net, sets, pattern, load, sat, reps, window=("10000", "30000"), seed=None):
    cmd = [ROUTEMU, "run", os.path.join(ROOT, NETS[net][0]), "--pattern", PATTERNS[pattern][0],
           "--rate", "%.9g" % (load / 12), "--replications", str(reps), "--warmup", window[0],
           "--cycles", "20000" if sat else window[1], "--json", "-"]
    if sat:
        cmd += ["--set", "experiment.saturation_backlog=1e9"]
    for s in sets:
        cmd += ["--set", s]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"routemu failed: {' '.join(cmd)}\n{p.stderr}")
    return json.loads(p.stdout)


def pct(a, b):
    return "—" if b is None else f"{100 * (a / b - 1):+.1f}%"


def seeds_text(vals, fmt):
    return " / ".join("—" if v is None else fmt.format(v) for v in vals)


def mean_of(vals):
    """The mean of the runs that finished (None: none did)."""
    done = [v for v in vals if v is not None]
    return statistics.mean(done) if done else None


def booksim_text(vals, fmt):
    m = mean_of(vals)
    if m is None:
        return f"did not finish in {BOOKSIM_TIMEOUT} s"
    return f"{fmt.format(m)} ({seeds_text(vals, fmt)})"


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    booksim, rows, cache_path, booksim_only, reps = argv[0], list(ROWS), None, False, 3
    a = argv[1:]
    while a:
        x = a.pop(0)
        if x == "--rows":
            rows = a.pop(0).split(",")
        elif x == "--cache":
            cache_path = a.pop(0)
        elif x == "--booksim-only":
            booksim_only = True
        elif x == "--reps":
            reps = int(a.pop(0))
        else:
            sys.exit(f"unknown argument {x}\n{__doc__}")
    for r in rows:
        if r not in ROWS:
            sys.exit(f"unknown row group {r} (known: {', '.join(ROWS)})")
    cache = Cache(cache_path or os.path.join(ROOT, "target", "booksim-cache.jsonl"))
    print("| network | routing / allocator (routemu / BookSim) | pattern | saturation routemu "
          "| BookSim (per seed) | diff | low load | latency routemu | BookSim | diff "
          "| high load | latency routemu | BookSim | diff |")
    print("|---" * 14 + "|")
    for group in rows:
        for net, sets, extra, patterns, label in ROWS[group]:
            for pat in patterns:
                seeds = PERM_SEEDS if pat == "randperm" else SEEDS
                bsat = [cache.get(booksim, booksim_cfg(net, extra, pat, 0.7, s, True))["accepted"]
                        for s in seeds]
                bound = min(routemu(net, sets, pat, 0.012, False, 1, ("0", "100"), seed=s)
                            ["throughput"]["pattern_bound"] or 1.0 for s in seeds)
                s_cap = min(bound, mean_of(bsat) or bound)
                low = 0.1 if 0.1 <= 0.4 * s_cap else round(0.3 * s_cap, 3)
                high = round((0.5 if pat == "randperm" else 0.7) * s_cap, 3)
                blat = {L: [cache.get(booksim, booksim_cfg(net, extra, pat, L, s, False))
                            for s in seeds] for L in (low, high)}
                if booksim_only:
                    continue
                acc, text = measure(net, sets, pat, 0.7, True, reps)
                cells = [net, label, pat, text, booksim_text(bsat, "{:.4f}"),
                         pct(acc, mean_of(bsat))]
                for L in (low, high):
                    lat, text = measure(net, sets, pat, L, False, reps)
                    bl = [x["latency"] for x in blat[L]]
                    unstable = " (unstable)" if any(x["unstable"] for x in blat[L]) else ""
                    cells += [f"{L:g}", text, booksim_text(bl, "{:.2f}") + unstable,
                              pct(lat, mean_of(bl))]
                print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
