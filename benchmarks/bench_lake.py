"""iochar ingest into a Parquet lake on Dask: logs/s with 1 and 2 workers vs a PyDarshan loop.

Issue 23 item 4 targets: >= 1.8x logs/s from 1 to 2 workers (on 2 cores), about
linear in the number of logs. The archive is the one of ``bench_darshan_archive.py``
(real Darshan logs written by libdarshan-util's writer,
:func:`iochar.datasets.synth_jobs.write_darshan_logs`) plus copies of the real logs
under data/darshan. Also printed: peak RSS per worker (from each worker process),
and whether the lake's row counts and job metrics equal a single-database load.

Usage: ``python3 benchmarks/bench_lake.py --logs 1000 10000``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _peak_rss() -> int:
    """This process's peak resident set [bytes]: ``VmHWM`` of /proc/self/status.

    Not ``getrusage``'s ``ru_maxrss``: Linux keeps that across fork and exec, so a
    worker started by a large parent reports the parent's peak.
    """
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def run(n: int, workers: int, paths: list[str], root: Path) -> tuple[float, list[int], float]:
    """Logs/s of one ingest, peak RSS per worker [bytes], worker CPU per log [s]."""
    import distributed

    from iochar.lake import cluster, ingest

    lake = root / f"lake-{n}-{workers}"
    with cluster(workers, dashboard=False) as c, distributed.Client(c) as cl:
        # warm workers (imports of pyarrow, pandas and the loaders: once per worker, ~1 s)
        cl.run(importlib.import_module, "iochar.load.darshan")
        cl.run(importlib.import_module, "iochar.lake.write")
        cpu0 = sum(cl.run(time.process_time).values())
        t = time.perf_counter()
        rep = ingest(paths, lake, client=cl)
        dt = time.perf_counter() - t
        cpu = sum(cl.run(time.process_time).values()) - cpu0
        rss = sorted(cl.run(_peak_rss).values())
    assert not rep.errors, rep.errors[:3]
    assert len(rep.landed) == len(paths)
    size = sum(p.stat().st_size for p in lake.rglob("*.parquet"))
    print(
        f"  {workers} worker(s): {rep.rows / len(paths):,.0f} rows/log, lake "
        f"{size / len(paths) / 1024:,.1f} KiB/log, {len(list(lake.rglob('*.parquet'))):,} files"
    )
    return len(paths) / dt, rss, cpu / len(paths)


def _same_as_database(paths: list[str], root: Path) -> bool:
    """Row counts and job metrics of a lake equal a single-database load of the inputs."""
    import distributed
    import pandas as pd

    import iochar
    from iochar.analyze.jobs import job_metrics
    from iochar.lake import cluster, ingest

    lake = root / "lake-check"
    with cluster(2, dashboard=False) as c, distributed.Client(c) as cl:
        ingest(paths, lake, client=cl)
    db = iochar.connect(":memory:")
    db.load_many(paths)
    lk = iochar.connect(lake=str(lake))
    a = job_metrics(db).jobs.sort_values("job_id").reset_index(drop=True)
    b = job_metrics(lk).jobs.sort_values("job_id").reset_index(drop=True)
    try:  # sums over rows in another order differ in the last bits (rtol 1e-12)
        pd.testing.assert_frame_equal(a, b, rtol=1e-12)
    except AssertionError as exc:
        print(exc)
        return False
    return db.row_counts() == lk.row_counts()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--logs", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--seed", type=int, default=23)
    args = ap.parse_args()
    import darshan
    from bench_darshan_archive import make_archive

    real = sorted((Path(__file__).parents[1] / "data" / "darshan").rglob("*.darshan"))
    ok = True
    for n in args.logs:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "logs").mkdir()
            paths = [str(p) for p in make_archive(n - len(real), root / "logs", args.seed)]
            for i, p in enumerate(real):
                dst = root / "logs" / f"real{i}_{p.name}"
                shutil.copy(p, dst)
                paths.append(str(dst))
            t = time.perf_counter()
            for p in paths:
                darshan.DarshanReport(p, read_all=True)
            pyd = len(paths) / (time.perf_counter() - t)
            load0 = os.getloadavg()[0]
            one, rss1, cpu1 = run(n, 1, paths, root)
            two, rss2, cpu2 = run(n, 2, paths, root)
            load1 = os.getloadavg()[0]
            ratio = two / one
            ok &= ratio >= 1.8
            print(
                f"{len(paths):,} logs: PyDarshan loop {pyd:,.0f} logs/s; ingest 1 worker "
                f"{one:,.0f} logs/s (peak RSS {rss1[-1] / 2**20:,.0f} MiB); 2 workers "
                f"{two:,.0f} logs/s (peak RSS per worker "
                f"{', '.join(f'{r / 2**20:,.0f}' for r in rss2)} MiB); "
                f"2/1 = {ratio:.2f}x {'PASS' if ratio >= 1.8 else 'FAIL'} (target >= 1.8x); "
                f"2 workers / PyDarshan = {two / pyd:.2f}x; worker CPU per log "
                f"{cpu1 * 1e3:.2f} ms (1 worker), {cpu2 * 1e3:.2f} ms (2 workers); "
                f"load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} cores "
                "(other processes' load takes the second core's share)"
            )
            same = _same_as_database(paths[: min(len(paths), 200)], root)
            ok &= same
            print(f"lake = database on {min(len(paths), 200)} of them: {same}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
