"""Accuracy of the required / checkpoint / staging classifier on seeded synthetic workloads.

Target (issue 4, issue 17 item 6): at least 95% of files and of bytes get the class
their workload was built with (:func:`iochar.datasets.synth.make_workload`), from the
trace and from Darshan-like counters made of it (what ``file_stats`` holds without
DXT). Three groups of workloads:

- ``scenarios``: the seven applications of Miller & Katz Tables 1-2
  (:data:`iochar.datasets.synth.SCENARIOS`), 2 processes, scale 0.02;
- ``drawn``: ``--drawn`` workloads with every knob drawn from a seeded generator
  over the ranges of :func:`iochar.testing.strategies.workloads`;
- ``patterns``: the issue 17 item 6 patterns (a log appended every iteration,
  output streamed over the run, an input read twice, output over the last 30% of
  the run, 2 or 3 checkpoints, a restart reading back the last checkpoint), each
  on drawn workloads.

Run: ``python benchmarks/bench_classify_accuracy.py [--drawn 60] [--seed 17]``.
Prints files % and bytes % right per group and source, and exits 1 below target.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np

from iochar.datasets.synth import SCENARIOS, Workload, make_scenario, make_workload
from iochar.testing.counters import classify_both_ways

TARGET = 0.95


def draw(rng: np.random.Generator) -> Workload:
    """One workload over the ranges of :func:`iochar.testing.strategies.workloads`."""
    iters = int(rng.integers(6, 41))
    return Workload(
        runtime_s=float(rng.uniform(5.0, 500.0)),
        iterations=iters,
        io_bytes=int(rng.choice([4096, 65536, 1 << 20])),
        input_bytes=int(rng.integers(1, 51)) << 20,
        output_bytes=int(rng.integers(1, 51)) << 20,
        staging_bytes=int(rng.choice([0, 1, 4, 16])) << 20,
        reread=int(rng.integers(1, 4)),
        rewrite=int(rng.integers(1, 3)),
        ckpt_every=int(rng.choice([0, int(rng.integers(1, max(1, iters // 3) + 1))])),
        ckpt_bytes=int(rng.integers(1, 16)) << 20,
        ckpt_mode=str(rng.choice(["new", "overwrite"])),
        nprocs=int(rng.integers(1, 4)),
        jitter=float(rng.uniform(0.0, 0.05)),
        think=float(rng.uniform(0.0, 0.6)),
        sync=bool(rng.integers(0, 2)),
    )


def patterns(w: Workload, rng: np.random.Generator) -> list[Workload]:
    """The issue 17 item 6 patterns added to one drawn workload."""
    ck = w.ckpt_every or max(1, w.iterations // 3)
    return [
        replace(w, log_bytes=int(rng.integers(40, 400))),  # (b) log appended every iteration
        replace(w, stream_bytes=int(rng.integers(1, 20)) << 20),  # (f) streamed output
        replace(w, input_reads=2),  # (e) input read twice
        replace(w, output_share=float(rng.uniform(0.2, 0.4))),  # (d) long output phase
        replace(w, ckpt_every=w.iterations // 2),  # (c) 2 checkpoints
        replace(w, ckpt_every=w.iterations // 3),  # (c) 3 checkpoints
        replace(w, ckpt_every=ck, restart=True),  # (a) restart reads the checkpoint back
    ]


def score(ops, truth) -> dict[str, tuple[int, int, float, float]]:
    """(files right, files, bytes right, bytes) from the trace and from counters."""
    out = {}
    for source, got in classify_both_ways(ops, truth).items():
        ok = (got["class"] == got["class_true"]).to_numpy()
        nbytes = (got["bytes_read"] + got["bytes_written"]).to_numpy(np.float64)
        out[source] = (int(ok.sum()), len(truth), float(nbytes[ok].sum()), float(nbytes.sum()))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drawn", type=int, default=60, help="drawn workloads (default 60)")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--show", type=int, default=5, help="wrong files to print per group")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    groups = {
        "scenarios": [("scenario", n) for n in sorted(SCENARIOS)],
        "drawn": [],
        "patterns": [],
    }
    for _ in range(args.drawn):
        w = draw(rng)
        groups["drawn"].append(("workload", w))
        if len(groups["patterns"]) < 7 * max(args.drawn // 3, 1):
            groups["patterns"] += [("workload", p) for p in patterns(w, rng)]
    failed = False
    for name, items in groups.items():
        tot = {s: np.zeros(4) for s in ("trace", "counters")}
        for i, (kind, what) in enumerate(items):
            if kind == "scenario":
                ops, truth = make_scenario(what, scale=0.02, nprocs=2, random_state=1)
            else:
                ops, truth = make_workload(what, random_state=args.seed + i)
            for s, v in score(ops, truth).items():
                tot[s] += v
        for s, (fr, fn, br, bn) in tot.items():
            files, nbytes = fr / fn, br / bn
            failed |= files < TARGET or nbytes < TARGET
            print(f"{name:10s} {s:9s} files {files:7.2%} of {int(fn):5d}   bytes {nbytes:7.2%}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
