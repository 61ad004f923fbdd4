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

    p = sub.add_parser(
        "calibrate",
        help="run fio on a directory and fit the FSU cost model t = a0 + a1*b",
        description="Run fio on a file in DIR (random offsets, direct I/O when the file "
        "system allows it, queue depth 1) at transfer sizes 4 KiB to 4 MiB, fit Uselton & "
        "Wright's model t = a0 + a1*b per op (their Eq. 4), and print the coefficients in "
        "the form of their Table I, what was measured, and predicted (Eq. 6) against "
        "measured bandwidth per size. With --from, fit existing fio JSON or IOR output "
        "instead of running fio.",
    )
    p.add_argument("dir", metavar="DIR", nargs="?", help="directory on the device to measure")
    p.add_argument("--quick", action="store_true", help="0.5 s per size and op (about 10 s)")
    p.add_argument(
        "--runtime", type=float, default=None, help="seconds per size and op (default 2)"
    )
    p.add_argument(
        "--sizes",
        choices=("pow4", "pow2"),
        default="pow4",
        help="4 KiB to 4 MiB by powers of 4 (6 sizes, default) or of 2 (11, as the paper)",
    )
    p.add_argument("--file-mib", type=int, default=256, help="data file size in MiB (256)")
    p.add_argument("--buffered", action="store_true", help="do not ask for O_DIRECT")
    p.add_argument("--robust", action="store_true", help="Huber IRLS fit instead of OLS")
    p.add_argument(
        "--json", default=None, help="save fio's JSON here (default DIR/iochar-calibrate.json)"
    )
    p.add_argument(
        "--from",
        dest="inputs",
        action="append",
        default=None,
        metavar="FILE",
        help="fit this fio JSON or IOR output instead of running fio (repeatable)",
    )
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


def cmd_calibrate(args: argparse.Namespace) -> int:
    import pandas as pd

    from iochar import calibrate
    from iochar.analyze import fsu

    if args.inputs:
        table = pd.concat([calibrate.read_calibration(f) for f in args.inputs], ignore_index=True)
        print(f"iochar calibrate: {len(table)} runs from {', '.join(args.inputs)}")
        json_path = None
    else:
        if args.dir is None:
            raise IocharError("calibrate needs DIR (a directory to measure) or --from FILE")
        runtime = args.runtime if args.runtime is not None else (0.5 if args.quick else 2.0)
        factor = 2 if args.sizes == "pow2" else 4
        json_path = args.json or os.path.join(args.dir, "iochar-calibrate.json")
        print(
            f"iochar calibrate: running fio in {args.dir} "
            f"(about {2 * len(calibrate.calibration_sizes(factor=factor)) * runtime:.0f} s)...",
            flush=True,
        )
        run = calibrate.run_fio(
            args.dir,
            sizes=calibrate.calibration_sizes(factor=factor),
            runtime_s=runtime,
            file_bytes=args.file_mib << 20,
            direct=not args.buffered,
            json_path=json_path,
        )
        table = run.table
        for line in run.describe():
            print(f"  {line}")
    model = fsu.fit_cost_model(table, robust="huber" if args.robust else None)
    coef = model.coefficients()
    print(f"model t = a0 + a1*b per op ({model.source_}), in the form of Table I:")
    print(
        f"  {'op':<6}{'latency s':>11}{'s/byte':>11}{'MiB/s':>10}{'IOPS max':>10}"
        f"{'R^2':>8}{'rms rel':>9}{'runs':>6}"
    )
    for op, r in coef.iterrows():
        print(
            f"  {op:<6}{r.latency_s:>11.3g}{r.s_per_byte:>11.3g}{r.rate_mib_s:>10.1f}"
            f"{r.iops_limit:>10.0f}{r.r2:>8.3f}{r.rmse_rel:>9.3f}{int(r.n):>6}"
        )
    for note in model.notes_:
        print(f"  note: {note}")
    cmp = fsu.compare_bandwidth(model, table)
    print("predicted (Eq. 6) vs measured bandwidth:")
    print(f"  {'op':<6}{'size':>10}{'measured MiB/s':>16}{'predicted MiB/s':>17}{'error':>8}")
    for r in cmp.itertuples():
        size = (
            f"{r.size_bytes / 1024:g} KiB"
            if r.size_bytes < 1 << 20
            else (f"{r.size_bytes / (1 << 20):g} MiB")
        )
        print(
            f"  {r.op:<6}{size:>10}{r.measured_mib_s:>16.2f}{r.predicted_mib_s:>17.2f}"
            f"{r.error:>+8.1%}"
        )
    print(
        f"  mean |error| {cmp.attrs['mean_abs_error']:.1%}, "
        f"max |error| {cmp.attrs['max_abs_error']:.1%} (in-sample: the same runs were fitted)"
    )
    if json_path:
        print(f"raw fio output: {json_path}")
    return 0


_COMMANDS = {
    "load": cmd_load,
    "info": cmd_info,
    "sql": cmd_sql,
    "export": cmd_export,
    "snapshot": cmd_snapshot,
    "synth": cmd_synth,
    "demo": cmd_demo,
    "calibrate": cmd_calibrate,
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
