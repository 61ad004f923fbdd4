"""Characterize and classify 10 million ops; compare with a DuckDB group-by of them.

Target (issue 4): characterizing and classifying 10 M ops -- ``file_io`` (the
one pass over the ops that all three share), then ``app_table``,
``rates_table``, ``file_table`` and ``classify`` on its result -- takes at
most 3x a DuckDB ``GROUP BY job_id, file_id, op`` (sums, counts, min/max
times, extent) over the same ops table. Each repeat starts from the store,
nothing is cached between repeats.

The ops are generated in DuckDB: 4 jobs x 16 ranks, 2,000 files, a mix of
staging files (read and re-written every cycle), a checkpoint series (40
checkpoints of 10 files each, one every 25 s) and inputs read at the start.

    python benchmarks/bench_characterize.py [--ops 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import iochar
from iochar.analyze.characterize import app_table, file_table, rates_table
from iochar.analyze.classify import classify
from iochar.analyze.fileio import file_io

GEN = """
INSERT INTO ops (job_id, rank, file_id, op, "offset", size, t_start, t_end)
SELECT i % 4 AS job_id, (i // 4) % 16 AS rank, (i // 64) % 2000 AS file_id,
       CASE WHEN (i // 64) % 2000 < 1500 THEN (CASE WHEN i % 3 = 0 THEN 'write' ELSE 'read' END)
            WHEN (i // 64) % 2000 < 1900 THEN 'write' ELSE 'read' END AS op,
       ((i // 128000) % 64) * 65536 AS "offset", 65536 AS size,
       CASE WHEN (i // 64) % 2000 BETWEEN 1500 AND 1899
            THEN (((i // 64) % 2000 - 1500) // 10) * 25.0
            WHEN (i // 64) % 2000 >= 1900 THEN i * 1e-9
            ELSE i * 1e-4 END AS t_start,
       0 AS t_end
FROM range($n) t(i)
"""


def build(n: int) -> iochar.Store:
    db = iochar.connect(":memory:")
    con = db.con
    con.execute(GEN, {"n": n})
    con.execute("UPDATE ops SET t_end = t_start + 0.0001")
    con.execute(
        "INSERT INTO files SELECT DISTINCT job_id, file_id, "
        "CASE WHEN file_id BETWEEN 1500 AND 1899 THEN '/run/ckpt.' || (file_id - 1500) "
        "ELSE '/run/f' || file_id END, NULL FROM ops"
    )
    con.execute(
        "INSERT INTO jobs (job_id, runtime_s) SELECT job_id, max(t_end) FROM ops GROUP BY job_id"
    )
    return db


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ops", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    db = build(args.ops)
    group = (
        "SELECT job_id, file_id, op, sum(size), count(*), min(t_start), max(t_end), "
        'max("offset" + size) FROM ops GROUP BY ALL'
    )
    duck, ours, labels = [], [], None
    for _ in range(args.repeat):
        t = time.perf_counter()
        db.sql(group).fetchall()
        duck.append(time.perf_counter() - t)
        t = time.perf_counter()
        facts = file_io(db)
        app_table(facts)
        rates_table(facts)
        file_table(facts)
        labels = classify(facts)
        ours.append(time.perf_counter() - t)
    d, o = statistics.median(duck), statistics.median(ours)
    print(f"characterize+classify: {args.ops:,} ops, {len(labels):,} (job, file) rows labelled")
    print(f"  duckdb group-by      : {d:7.3f} s")
    print(f"  iochar tables+classes: {o:7.3f} s")
    verdict = "PASS" if o / d <= 3 else "FAIL"
    print(f"  ratio iochar/duckdb  : {o / d:7.2f}  (target <= 3.00) {verdict}")
    print("  classes:", labels["class"].value_counts().to_dict())


if __name__ == "__main__":
    main()
