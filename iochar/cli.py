"""The ``iochar`` command: parse arguments, call the library, print.

On an :class:`~iochar.errors.IocharError` it prints ``iochar: error: <message>``
and exits with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from iochar.errors import IocharError

__all__ = ["main", "build_parser"]


def _db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=None,
        help="database file (default: $IOCHAR_DB or ./iochar.duckdb; ':memory:' works)",
    )


def _kinds_epilog() -> str:
    from iochar import load

    lines = ["input kinds (sniffed from content when --kind is not given):"]
    for kind in load.kinds():
        lines.append(f"  {kind:<14} {load.get_loader(kind).description}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``iochar`` command."""
    from iochar import __version__

    ap = argparse.ArgumentParser(
        prog="iochar",
        description="Characterize storage I/O workloads: load traces, counters and "
        "snapshots into DuckDB, analyze, and report.",
    )
    ap.add_argument("--version", action="version", version=f"iochar {__version__}")
    ap.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "load",
        help="load inputs, print what landed per table",
        description="Load each input in one transaction; the same bytes twice are a no-op.",
        epilog=_kinds_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="input files")
    p.add_argument("--kind", default=None, help="input kind (default: sniffed)")
    p.add_argument(
        "--tolerant",
        action="store_true",
        help="skip and count bad records instead of stopping at the first",
    )
    p.add_argument("--chunk-rows", type=int, default=1_000_000, help="rows per parsed chunk")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _db_arg(p)

    p = sub.add_parser("info", help="sources, tables and row counts")
    _db_arg(p)

    p = sub.add_parser("sql", help="run a query and print the result")
    p.add_argument("query", help="SQL text")
    p.add_argument("--format", choices=("table", "csv"), default="table")
    p.add_argument("--max-rows", type=int, default=40, help="rows shown in table format")
    _db_arg(p)

    p = sub.add_parser("export", help="write ops as a trace-csv or trace-parquet file")
    p.add_argument("out", help="output file (.csv or .parquet)")
    p.add_argument("--job", type=int, default=None, help="only this job_id")
    _db_arg(p)

    p = sub.add_parser(
        "snapshot",
        help="walk a directory tree and write a file-system snapshot (Parquet)",
        description="Walk DIR and write the size, times and owner of every regular file "
        "to FILE (Parquet); load it with: iochar load FILE",
    )
    p.add_argument("dir", metavar="DIR", help="directory to walk")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="Parquet file to write")
    p.add_argument(
        "--follow-symlinks", action="store_true", help="follow symbolic links (default: skip)"
    )

    p = sub.add_parser(
        "synth",
        help="write a synthetic workload with its truth",
        description="Write a seeded synthetic trace shaped like one of Miller & Katz's "
        "applications (trace-parquet or trace-csv by suffix) and its truth beside it "
        "(OUT.truth.csv: each file's class).",
    )
    p.add_argument("scenario", help="bvi, ccm, forma, gcm, les, upw or venus")
    p.add_argument("-o", "--out", required=True, help="output .parquet or .csv")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--scale", type=float, default=1.0, help="shrink time and volume (0, 1]")
    p.add_argument("--nprocs", type=int, default=1, help="processes (default 1)")

    p = sub.add_parser(
        "demo",
        help="the main job on bundled data: load it and report what landed",
        description="Load the bundled real fixtures (data/) into DIR/iochar.duckdb and "
        "print what landed.",
    )
    p.add_argument("--out", default="demo-report", help="output folder (default: demo-report)")
    p.add_argument("--data", default=None, help="data folder (default: the bundled data/)")
    return ap


def _open(args: argparse.Namespace, read_only: bool = False):
    import iochar

    path = args.db
    if read_only and path not in (None, ":memory:"):
        if not os.path.exists(path):
            raise IocharError(f"database {path!r} does not exist; load something first")
    return iochar.connect(path, read_only=read_only)


def _progress_bar(enabled: bool, desc: str):
    if not enabled:
        return None, None
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=" rows", unit_scale=True, leave=False, file=sys.stderr)

    def update(rows: int, _total: int | None) -> None:
        bar.update(rows - bar.n)

    return bar, update


def cmd_load(args: argparse.Namespace) -> int:
    import warnings

    from iochar.errors import SkippedRecordsWarning

    db = _open(args)
    show = not args.no_progress and sys.stderr.isatty()
    with db, warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedRecordsWarning)  # said in the summary line
        for path in args.paths:
            bar, update = _progress_bar(show, Path(path).name)
            try:
                res = db.load(
                    path,
                    kind=args.kind,
                    strict=not args.tolerant,
                    chunk_rows=args.chunk_rows,
                    progress=update,
                )
            finally:
                if bar is not None:
                    bar.close()
            print(f"{res.summary()} ({res.seconds:.2f} s)")
            for w in res.warnings:
                print(f"  note: {w}")
            for skip in res.skips[:5]:
                print(f"  skipped line {skip.line}: {skip.reason}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    db = _open(args, read_only=True)
    with db:
        print(f"database: {db.path} (schema version {db.schema_version})")
        src = db.sql(
            "SELECT source_id, kind, uri, rows, loaded_at FROM sources ORDER BY source_id"
        ).fetchall()
        print(f"sources: {len(src)}")
        for sid, kind, uri, rows, at in src:
            print(f"  {sid:>4}  {kind:<14} {rows:>12,} rows  {at:%Y-%m-%d %H:%M}  {uri}")
        print("tables:")
        for table, n in db.row_counts().items():
            print(f"  {table:<16} {n:>12,}")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    import duckdb

    db = _open(args, read_only=True)
    with db:
        try:
            rel = db.sql(args.query)
        except duckdb.Error as exc:
            raise IocharError(f"query failed: {exc}") from exc
        if rel is None:
            return 0
        if args.format == "csv":
            import csv

            out = csv.writer(sys.stdout, lineterminator="\n")
            out.writerow(rel.columns)
            out.writerows(rel.fetchall())
        else:
            rel.show(max_rows=args.max_rows, max_width=200)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    db = _open(args, read_only=True)
    with db:
        n = db.export_trace(args.out, job_id=args.job)
    print(f"wrote {n:,} ops to {args.out}")
    return 0


def cmd_snapshot(args: argparse.Namespace) -> int:
    from iochar.walk import snapshot_dir

    t0 = time.perf_counter()
    n = snapshot_dir(args.dir, args.out, follow_symlinks=args.follow_symlinks)
    print(f"wrote {n:,} files under {args.dir} to {args.out} ({time.perf_counter() - t0:.2f} s)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from iochar import datasets

    t0 = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dbpath = out / "iochar.duckdb"
    if dbpath.exists():
        dbpath.unlink()
    import iochar

    files = datasets.demo_inputs(args.data)
    print(f"iochar demo: loading {len(files)} bundled inputs into {dbpath}")
    with iochar.connect(str(dbpath)) as db:
        for path, kind in files:
            res = db.load(path, kind=kind)
            print(f"  {res.summary()}")
        print("what landed:")
        for table, n in db.row_counts().items():
            if n:
                print(f"  {table:<16} {n:>10,}")
        # DXT_MPIIO segments repeat the DXT_POSIX ones a layer up: count the POSIX layer
        jobs = db.sql(
            "SELECT j.job_id, s.kind, j.app, j.nprocs, round(j.runtime_s, 2) AS runtime_s, "
            "count(o.job_id) AS ops, sum(o.size) FILTER (WHERE o.op = 'read') AS bytes_read, "
            "sum(o.size) FILTER (WHERE o.op = 'write') AS bytes_written "
            "FROM jobs j JOIN sources s USING (source_id) "
            "LEFT JOIN ops o ON o.job_id = j.job_id AND o.call IS DISTINCT FROM 'DXT_MPIIO' "
            "GROUP BY ALL ORDER BY j.job_id"
        )
        print("jobs (ops and bytes from per-operation records; Darshan: the POSIX layer):")
        jobs.show(max_rows=50, max_width=200)
    print(f"done in {time.perf_counter() - t0:.1f} s; explore with: iochar info --db {dbpath}")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from iochar import synth

    ops, truth = synth.make_scenario(
        args.scenario, scale=args.scale, nprocs=args.nprocs, random_state=args.seed
    )
    truth_path = synth.write_trace(ops, truth, args.out)
    counts = truth["class"].value_counts().to_dict()
    print(
        f"wrote {ops.num_rows:,} ops of {args.scenario} to {args.out}; truth in {truth_path} "
        f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})"
    )
    return 0


_COMMANDS = {
    "load": cmd_load,
    "info": cmd_info,
    "sql": cmd_sql,
    "export": cmd_export,
    "snapshot": cmd_snapshot,
    "synth": cmd_synth,
    "demo": cmd_demo,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``iochar`` command; returns the exit status."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except IocharError as exc:
        if args.debug:
            raise
        print(f"iochar: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("iochar: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
