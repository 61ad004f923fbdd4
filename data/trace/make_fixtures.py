"""Recreate data/trace/*.csv from the real Darshan DXT logs in data/darshan/.

    python data/trace/make_fixtures.py

Each CSV is iochar's trace-csv layout holding the DXT_POSIX segments of one
real log, as loaded by iochar's darshan loader (see SOURCE.md here).
"""

from __future__ import annotations

from pathlib import Path

import iochar
from iochar.load.trace_table import EXPORT_COLUMNS

HERE = Path(__file__).resolve().parent
DARSHAN = HERE.parent / "darshan"

#: output name -> (log, max ops kept, first ops in time order)
FIXTURES = {
    "ior-hdf5-dxt-posix.csv": ("ior_hdf5_example.darshan", None),
    "dxt-posix-first150.csv": ("dxt.darshan", 150),
}


def main() -> None:
    for out, (log, limit) in FIXTURES.items():
        db = iochar.connect(":memory:")
        db.load(DARSHAN / log)
        cols = ", ".join('f."path"' if c == "path" else f'o."{c}"' for c in EXPORT_COLUMNS)
        rel = db.sql(
            f"SELECT {cols} FROM ops o JOIN files f USING (job_id, file_id) "
            "WHERE o.call = 'DXT_POSIX' ORDER BY o.t_start, o.rank, o.t_end"
            + (" LIMIT $n" if limit else ""),
            params={"n": limit} if limit else None,
        )
        rel = rel.order("rank, t_start, t_end")
        rel.write_csv(str(HERE / out), header=True)
        if limit is None:  # the small one also as trace-parquet
            rel.write_parquet(str(HERE / out.replace(".csv", ".parquet")))
        print(out, rel.aggregate("count(*)").fetchall()[0][0], "ops")


if __name__ == "__main__":
    main()
