"""Group 100k jobs into repeated-job sets with Table IV; compare with a DuckDB group-by.

Target (issue 7): :func:`iochar.analyze.variance.repeated_jobs` -- identity x
byte-cell GROUP BY, merging neighbouring cells within the 1% tolerance, Table
IV's mean, min, max, standard deviation and CV per group, and every job's
group -- over a per-job table of 100,000 jobs takes at most 3x a DuckDB
``GROUP BY user, app, nprocs, files`` with the same aggregates over the same
table (which cannot honour the bytes tolerance: it is the floor, not an
alternative). Both start from the same pandas frame (a fresh DuckDB
connection each, registering the frame); medians of ``--repeat`` runs,
interleaved.

The jobs: ``--groups`` sets of repeated jobs (identity drawn from 300 users,
400 applications, 1-4096 processes, 1-100k files; bytes lognormal, jittered
by at most 0.4% within a set; slowest-rank I/O times lognormal with a CV per
set), so the grouping's answer is known: the adjusted Rand index against the
drawn sets is printed too.

    python benchmarks/bench_variance.py [--jobs 100000] [--groups 4000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb
import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_rand_score

from iochar.analyze.variance import repeated_jobs

BASELINE = """
SELECT "user", app, nprocs, files, count(*) AS samples,
       avg(bytes_read) / 2^30 AS gib_read, avg(bytes_written) / 2^30 AS gib_written,
       avg(slowest_io_s) AS mean_s, min(slowest_io_s) AS min_s, max(slowest_io_s) AS max_s,
       stddev_samp(slowest_io_s) AS std_s,
       100 * stddev_samp(slowest_io_s) / avg(slowest_io_s) AS cv_pct
FROM jm GROUP BY ALL
"""


def make_jobs(n: int, groups: int, seed: int = 0) -> pd.DataFrame:
    """``n`` jobs in ``groups`` repeated sets; column ``truth`` is the set."""
    rng = np.random.default_rng(seed)
    g = np.sort(rng.integers(0, groups, n))
    user = rng.integers(0, 300, groups)
    app = rng.integers(0, 400, groups)
    nprocs = 2 ** rng.integers(0, 13, groups)
    files = np.maximum(1, rng.lognormal(5, 2.5, groups).astype(np.int64))
    br = rng.lognormal(30, 3, groups)
    bw = np.where(rng.random(groups) < 0.2, 0.0, rng.lognormal(27, 3, groups))
    mean = rng.lognormal(4, 1.5, groups)
    cv = rng.uniform(0.05, 1.0, groups)
    sigma = np.sqrt(np.log1p(cv**2))
    t = mean[g] * np.exp(sigma[g] * rng.standard_normal(n) - sigma[g] ** 2 / 2)
    jit = 0.004
    return pd.DataFrame(
        {
            "job_id": np.arange(n, dtype=np.int64),
            "user": pd.array((user[g]).astype(str), dtype="string"),
            "app": pd.array(np.char.add("app", app[g].astype(str)), dtype="string"),
            "nprocs": nprocs[g].astype(np.int32),
            "files": files[g],
            "bytes_read": np.round(br[g] * (1 + rng.uniform(-jit, jit, n))).astype(np.int64),
            "bytes_written": np.round(bw[g] * (1 + rng.uniform(-jit, jit, n))).astype(np.int64),
            "slowest_io_s": t,
            "truth": g,
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--groups", type=int, default=4_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    jobs = make_jobs(args.jobs, args.groups)
    frame = jobs.drop(columns="truth")
    repeated_jobs(frame.head(1000))  # warm up imports and DuckDB
    duck, ours, res = [], [], None
    for _ in range(args.repeat):
        t = time.perf_counter()
        con = duckdb.connect(":memory:")
        con.register("jm", frame)
        con.execute(BASELINE).df()
        con.close()
        duck.append(time.perf_counter() - t)
        t = time.perf_counter()
        res = repeated_jobs(frame, 0.01, min_samples=1)
        ours.append(time.perf_counter() - t)
    d, o = statistics.median(duck), statistics.median(ours)
    m = res.members.merge(jobs[["job_id", "truth"]], on="job_id")
    ari = adjusted_rand_score(m["truth"], m["group_id"].astype("int64"))
    print(
        f"repeated jobs: {args.jobs:,} jobs, {args.groups:,} drawn sets -> "
        f"{len(res.groups):,} groups (adjusted Rand vs drawn sets {ari:.4f})"
    )
    print(f"  duckdb group-by         : {d:7.3f} s")
    print(f"  iochar repeated_jobs    : {o:7.3f} s")
    verdict = "PASS" if o / d <= 3 else "FAIL"
    print(f"  ratio iochar/duckdb     : {o / d:7.2f}  (target <= 3.00) {verdict}")


if __name__ == "__main__":
    main()
