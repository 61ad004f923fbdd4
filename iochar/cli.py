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
    _wait_arg(p)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def _wait_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wait",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="while another process (a notebook's query, another load) holds the "
        "database, retry this long before failing; 0 fails at once "
        "(default: $IOCHAR_WAIT or 5)",
    )


def _kinds_epilog() -> str:
    # from the light kind table: --help imports no loader (issue 18)
    from iochar.load._kinds import KINDS

    lines = ["input kinds (sniffed from content when --kind is not given):"]
    for row in KINDS:
        lines.append(f"  {row.kind:<14} {row.description}")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose epilog may be a function, called only to print help.

    ``iochar load --help`` lists the input kinds; building that text for every
    command (``iochar --version`` too) would import the kind table for nothing.
    """

    def format_help(self) -> str:
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


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
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "load",
        help="load inputs, print what landed per table",
        description="Load each input all or nothing; the same bytes twice are a no-op. "
        "Many inputs load in few transactions (a bad one is reported, the others land; "
        "the exit status is 1 when any failed).",
        epilog=_kinds_epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="input files, folders (searched recursively) or patterns ('logs/**/*.darshan'); "
        "files found in folders that no loader recognises are skipped and counted",
    )
    p.add_argument("--kind", default=None, help="input kind (default: sniffed)")
    p.add_argument(
        "--tolerant",
        action="store_true",
        help="skip and count bad records instead of stopping at the first",
    )
    p.add_argument("--chunk-rows", type=int, default=1_000_000, help="rows per parsed chunk")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes parsing many inputs at once (default: one per core beyond the "
        "writer's when there are hundreds of inputs; 1: parse in this process)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress line (it is shown only when stderr is a terminal)",
    )
    _db_arg(p)

    p = sub.add_parser(
        "ingest",
        help="parse many inputs in parallel on Dask into a Parquet lake",
        description="Walk files, folders and patterns; parse them on a Dask cluster (a "
        "local one of --workers processes, or --scheduler ADDRESS) into the lake DIR. An "
        "input is visible only once the lake's manifest records it; inputs already in it "
        "(same bytes) are skipped; bad inputs are listed with their error (exit status 1).",
    )
    p.add_argument("paths", nargs="+", metavar="SRC", help="input files, folders or patterns")
    p.add_argument("--lake", required=True, metavar="DIR", help="the lake folder")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=2, metavar="N", help="local processes")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler")
    p.add_argument("--kind", default=None, help="input kind (default: sniffed)")
    p.add_argument("--tolerant", action="store_true", help="skip and count bad records")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser("info", help="inputs by kind, tables and row counts")
    p.add_argument("-v", "--verbose", action="store_true", help="list every input")
    _db_arg(p)

    p = sub.add_parser("sql", help="run a query and print the result")
    p.add_argument("query", help="SQL text")
    p.add_argument("--format", choices=("table", "csv"), default="table")
    p.add_argument("--max-rows", type=int, default=40, help="rows shown in table format")
    _db_arg(p)

    p = sub.add_parser(
        "export",
        help="write ops as a trace-csv or trace-parquet file; or a database <-> a lake",
        description="Write ops as a trace file (OUT). With --lake DIR: the database "
        "(--db) into a new lake DIR, or, when DIR is a lake, the lake into a new "
        "database OUT.",
    )
    p.add_argument("out", nargs="?", default=None, help="output file (.csv, .parquet, .duckdb)")
    p.add_argument("--lake", default=None, metavar="DIR", help="a Parquet lake (iochar ingest)")
    p.add_argument("--job", type=int, default=None, help="only this job_id")
    _db_arg(p)

    p = sub.add_parser(
        "insights",
        help="I/O problems found in the loaded jobs, with evidence and advice",
        description="Run the insight rules (iochar.analyze.insights) on the database: "
        "each finding has a code, a topic, a severity (info, warn, high) computed from "
        "the numbers, the evidence and a recommendation. Rules that could not be checked "
        "for lack of data are counted under the table.",
    )
    p.add_argument("--job", type=int, default=None, help="only this job_id")
    p.add_argument(
        "--min-severity",
        choices=("info", "warn", "high"),
        default="info",
        help="leave out findings below this severity (default: info, all)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="a JSON list of objects (job_id, code, topic, severity, title, evidence, "
        "recommendation)",
    )
    _db_arg(p)

    p = sub.add_parser(
        "summary",
        help="one-shot verdict on a Darshan log, strace file, trace or database",
        description="Load the inputs (in memory unless --db) or open a database, then "
        "print per job: its facts, volume and time by interface and op, the top files "
        "with their class, the access-size profile, cycles and insights by severity; "
        "several jobs are also summarised as a set. --html writes the same as one "
        "offline page, --json prints it as JSON. The exit status is 1 when an input "
        "failed to load (the others are summarised).",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="Darshan logs, strace files, traces (csv/parquet), folders or patterns of "
        "them, or one iochar database (.duckdb)",
    )
    p.add_argument("--kind", default=None, help="input kind (default: sniffed)")
    p.add_argument("--html", default=None, metavar="OUT", help="also write one HTML page here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead")
    p.add_argument("--top", type=int, default=10, help="files listed per job (default 10)")
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
        help="the main job: build demo data, load it, run every report notebook",
        description="Build the demo data (seeded synthetic application traces and a "
        "Table IV-shaped job population, plus the real fixtures in data/), load it into "
        "OUT/iochar.duckdb, run every notebook in notebooks/ as a report and write "
        "OUT/index.html linking them. Exits non-zero if a report fails.",
    )
    p.add_argument("--out", default="demo-report", help="output folder (default: demo-report)")
    p.add_argument("--data", default=None, help="data folder (default: the bundled data/)")
    p.add_argument(
        "--jobs", type=int, default=2, help="notebooks run at once (default 2, one per core)"
    )
    p.add_argument("--no-reports", action="store_true", help="build and load only")

    p = sub.add_parser(
        "report",
        help="run a notebook as a report and write one self-contained HTML file",
        description="Run notebooks/NAME.ipynb with papermill (parameters from -p, checked "
        "against the notebook's parameters cell) and write one HTML file that opens "
        "offline: narrative, tables and charts (static SVG), no code. When the database "
        "cannot answer (a job or target that does not exist, a missing table) the page "
        "says so at the top and the command exits non-zero.",
    )
    p.add_argument(
        "name", nargs="?", help="notebook: 01, application-traces or 01-application-traces"
    )
    p.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="set a parameter (repeatable)",
    )
    p.add_argument("-o", "--out", default=None, help="HTML file (default: NAME.html)")
    p.add_argument("--db", default=None, help="database (same as -p db PATH)")
    p.add_argument("--list", action="store_true", help="list the notebooks and their parameters")
    p.add_argument("--keep-notebook", action="store_true", help="also keep the executed .ipynb")
    p.add_argument("--show-code", action="store_true", help="show the code cells in the page too")
    _wait_arg(p)

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
    p.add_argument(
        "--levels",
        default=None,
        metavar="L[,L]",
        help="measure I/O path levels for the capacity table (Méndez et al.): device "
        "(O_DIRECT in DIR), local_fs (buffered in DIR), mount (buffered in --mount); "
        "each a sweep of read/write x sequential/random x --cap-sizes x --nprocs, "
        "--reps times; stored in --db. With --from: the level of those inputs "
        "(default: IOR with an I/O library -> library, IOR POSIX -> mount, fio direct -> "
        "device, fio buffered -> local_fs)",
    )
    p.add_argument("--mount", default=None, help="directory on the network/parallel mount")
    p.add_argument("--reps", type=int, default=None, help="repetitions per point (3; --quick 2)")
    p.add_argument(
        "--nprocs",
        default="1",
        metavar="N[,N]",
        help="concurrent processes per point (fio numjobs; Kwan & Reed's scale axis)",
    )
    p.add_argument(
        "--cap-sizes",
        default=None,
        metavar="B[,B]",
        help="request sizes in bytes for --levels (default 4096,65536,1048576; --quick "
        "65536,1048576)",
    )
    p.add_argument(
        "--db", default=None, help="store the capacity table here (with --levels or --from)"
    )
    _wait_arg(p)
    return ap


def _open(args: argparse.Namespace, read_only: bool = False):
    import iochar
    from iochar.errors import DatabaseLockedError

    path = args.db
    if path is not None and os.path.isdir(path):
        # a lake folder (iochar ingest): read-only views over its Parquet
        return iochar.connect(lake=path)
    if read_only and path not in (None, ":memory:"):
        if not os.path.exists(path):
            raise IocharError(f"database {path!r} does not exist; load something first")
    try:
        return iochar.connect(path, read_only=read_only, wait=args.wait)
    except DatabaseLockedError as exc:
        raise exc.with_retry("retry with a longer --wait SECONDS") from None


def _expand_inputs(args_paths: list[str], kind: str | None) -> tuple[list[str], bool, dict]:
    """The input files named by ``PATH`` arguments: files, folders and globs.

    A folder is searched recursively and a pattern (``*``, ``?``, ``[``, ``**``) is
    expanded as a shell would, recursively for ``**``; hidden files and folders are
    left out. A file found that way that no loader recognises (sniffed on its first
    bytes, unless ``kind`` is given) is skipped, counted by reason. A file named
    directly is always tried, so a bad one still stops with its error.

    Returns
    -------
    (list of str, bool, dict of str to int)
        The files in order, whether any came from a folder or pattern, and the
        skipped files per reason.
    """
    import glob

    from iochar import load
    from iochar.errors import InputError, UnknownKindError

    files: list[str] = []
    searched = False
    skipped: dict[str, int] = {}
    for arg in args_paths:
        p = Path(arg)
        if p.is_dir():
            found = sorted(
                str(f)
                for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        elif not p.exists() and glob.has_magic(arg):
            found = sorted(f for f in glob.glob(arg, recursive=True) if Path(f).is_file())
        else:
            files.append(arg)
            continue
        searched = True
        for f in found:
            if kind is None:
                try:
                    load.sniff(f)
                except UnknownKindError:
                    skipped["not an input any loader recognises"] = (
                        skipped.get("not an input any loader recognises", 0) + 1
                    )
                    continue
                except InputError:
                    skipped["empty or unreadable"] = skipped.get("empty or unreadable", 0) + 1
                    continue
            files.append(f)
    return files, searched, skipped


def cmd_load(args: argparse.Namespace) -> int:
    import warnings

    from iochar.errors import SkippedRecordsWarning
    from iochar.progress import InputsProgress, LoadProgress

    paths, searched, skipped = _expand_inputs(args.paths, args.kind)
    for reason, n in sorted(skipped.items()):
        print(f"skipped {n:,} file{'s' if n != 1 else ''}: {reason}")
    if not paths:
        raise IocharError("no input to load in " + ", ".join(args.paths))
    db = _open(args)
    # a self-erasing line on a terminal only: quiet when piped or in a notebook
    show = not args.no_progress and sys.stderr.isatty()
    with db, warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedRecordsWarning)  # said in the summary line
        if len(paths) == 1 and not searched:
            with LoadProgress(Path(paths[0]).name, paths[0], enabled=show) as bar:
                res = db.load(
                    paths[0],
                    kind=args.kind,
                    strict=not args.tolerant,
                    chunk_rows=args.chunk_rows,
                    progress=bar.update,
                )
            _print_result(res)
            return 0
        # many inputs: few transactions, each input still all or nothing (Store.load_many)
        with InputsProgress(len(paths), enabled=show) as bar:
            results = db.load_many(
                paths,
                kind=args.kind,
                strict=not args.tolerant,
                chunk_rows=args.chunk_rows,
                progress=bar.update,
                workers=args.workers,
            )
    failed = 0
    for res in results:
        if res.error is not None:
            failed += 1
            print(f"{res.uri}: not loaded: {res.error}")
        else:
            _print_result(res)
    landed = sum(r.error is None and not r.duplicate for r in results)
    again = sum(r.error is None and r.duplicate for r in results)
    n, k = len(results), sum(skipped.values())
    print(
        f"{n:,} input{'s' if n != 1 else ''}: {landed:,} loaded, {again:,} already in the "
        f"database, {failed:,} failed"
        + (f", {k:,} file{'s' if k != 1 else ''} skipped" if skipped else "")
    )
    return 1 if failed else 0


def _print_result(res) -> None:
    print(f"{res.summary()} ({res.seconds:.2f} s)")
    for w in res.warnings:
        print(f"  note: {w}")
    for skip in res.skips[:5]:
        print(f"  skipped line {skip.line}: {skip.reason}")


def cmd_info(args: argparse.Namespace) -> int:
    db = _open(args, read_only=True)
    with db:
        print(f"database: {db.path} (schema version {db.schema_version})")
        src = db.sql(
            "SELECT source_id, kind, uri, rows, loaded_at FROM sources ORDER BY kind, source_id"
        ).fetchall()
        print(f"sources: {len(src)}")
        by_kind: dict[str, list] = {}
        for row in src:
            by_kind.setdefault(row[1], []).append(row)
        for kind, rows in by_kind.items():
            n = sum(r[3] for r in rows)
            first = min(r[4] for r in rows)
            last = max(r[4] for r in rows)
            when = f"{first:%Y-%m-%d %H:%M}"
            if f"{last:%Y-%m-%d %H:%M}" != when:
                when += f" .. {last:%Y-%m-%d %H:%M}"
            print(
                f"  {kind:<14} {len(rows):>5} input{'s' if len(rows) != 1 else ' '} "
                f"{n:>13,} rows  loaded {when}"
            )
            if args.verbose:
                for sid, _, uri, nrows, at in rows:
                    print(f"    {sid:>5}  {nrows:>12,} rows  {at:%Y-%m-%d %H:%M}  {uri}")
        if src and not args.verbose:
            print("  (--verbose lists every input)")
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
            _print_table(rel, args.max_rows)
    return 0


def _print_table(rel, max_rows: int) -> None:
    """A query result as a table that fits the terminal (100 columns when piped).

    Each cell stays on one line; a cell wider than its column's share ends in "…"
    (``--format csv`` gives every value whole). Numbers are right-aligned, NULL is
    shown as NULL, and the row count is said under the table.
    """
    import shutil

    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    rows = rel.limit(max_rows + 1).fetchall()
    total = rel.aggregate("count(*)").fetchall()[0][0] if len(rows) > max_rows else len(rows)
    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100
    console = Console(width=width, highlight=False, soft_wrap=False)
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    numeric = [str(t).split("(")[0] in _NUMERIC_TYPES for t in rel.types]
    cells = [
        ["NULL" if v is None else str(v).replace("\n", " ") for v in r] for r in rows[:max_rows]
    ]
    natural = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(rel.columns)]
    # numbers are never cut; text columns share what is left (3 = padding and rule)
    fixed = sum(w for w, num in zip(natural, numeric, strict=True) if num)
    text = _fit_widths(
        [w for w, num in zip(natural, numeric, strict=True) if not num],
        width - 3 * len(natural) - fixed,
    )
    widths = [w if num else text.pop(0) for w, num in zip(natural, numeric, strict=True)]
    for name, num, w in zip(rel.columns, numeric, widths, strict=True):
        table.add_column(Text(name), justify="right" if num else "left", no_wrap=True,
                         overflow="ellipsis", width=w)  # fmt: skip
    for row in cells:  # Text: a value from the data is never read as rich markup
        table.add_row(*(Text(v) for v in row))
    console.print(table)
    shown = min(len(rows), max_rows)
    more = f", first {shown:,} shown (--max-rows, or --format csv for all)" if total > shown else ""
    print(f"({total:,} row{'s' if total != 1 else ''}{more})")


def _fit_widths(natural: list[int], room: int, floor: int = 8) -> list[int]:
    """Column widths within ``room``: one cap for the widest columns, none below ``floor``.

    The cap is the largest ``c`` with ``sum(min(w, c)) <= room``, so narrow columns
    keep their width and only the wide ones are cut (water-filling).

    >>> _fit_widths([9, 80, 120], 100)
    [9, 45, 46]
    >>> _fit_widths([3, 4], 100)
    [3, 4]
    """
    if sum(natural) <= room:
        return list(natural)
    lo, hi = floor, max(natural)
    while lo < hi:  # largest cap that fits
        mid = (lo + hi + 1) // 2
        if sum(min(w, mid) for w in natural) <= room:
            lo = mid
        else:
            hi = mid - 1
    widths = [min(w, lo) for w in natural]
    spare = room - sum(widths)  # hand what is left to the cut columns, one each
    for k in sorted(range(len(widths)), key=lambda k: -natural[k]):
        if spare <= 0 or widths[k] >= natural[k]:
            continue
        widths[k] += 1
        spare -= 1
    return widths


#: DuckDB types printed right-aligned.
_NUMERIC_TYPES = frozenset(
    "TINYINT SMALLINT INTEGER BIGINT HUGEINT UTINYINT USMALLINT UINTEGER UBIGINT UHUGEINT "
    "FLOAT DOUBLE DECIMAL".split()
)


def cmd_export(args: argparse.Namespace) -> int:
    if args.lake is not None:
        from iochar.lake import export, layout

        if layout.is_lake(args.lake):
            if args.out is None:
                raise IocharError("name the new database: iochar export --lake DIR OUT.duckdb")
            n = export.to_database(args.lake, args.out)
            print(f"wrote {n:,} inputs of the lake {args.lake} to the database {args.out}")
            return 0
        with _open(args, read_only=True) as db:
            n = export.to_lake(db, args.lake)
        print(f"wrote {n:,} inputs to the lake {args.lake}")
        return 0
    if args.out is None:
        raise IocharError("name the output file (.csv or .parquet), or give --lake DIR")
    db = _open(args, read_only=True)
    with db:
        n = db.export_trace(args.out, job_id=args.job)
    print(f"wrote {n:,} ops to {args.out}")
    return 0


def cmd_insights(args: argparse.Namespace) -> int:
    """Print the insights as a table or as JSON (issue 19, item 4)."""
    import json

    from iochar.analyze import insights

    db = _open(args, read_only=True)
    with db:
        found = insights.run(db, job_id=args.job)
    rank = {s: i for i, s in enumerate(insights.SEVERITIES)}
    keep = found[found["severity"].map(rank) >= rank[args.min_severity]]
    keys = ("job_id", "code", "topic", "severity", "title", "evidence", "recommendation")
    records = [{k: row[k] for k in keys} for row in keep.to_dict("records")]
    for r in records:
        r["job_id"] = int(r["job_id"])
    if args.json:
        json.dump(records, sys.stdout, indent=1)
        print()
        return 0
    _print_insights(records)
    skipped = found.evidence["not_checked"]
    print(
        f"({len(records)} finding{'s' if len(records) != 1 else ''} at {args.min_severity} "
        f"or above; {found.evidence['checked']} rule checks on {found.evidence['jobs']} "
        f"job{'s' if found.evidence['jobs'] != 1 else ''}, {len(skipped)} not checked "
        "for lack of data)"
    )
    return 0


def _print_insights(records: list[dict]) -> None:
    """Findings as a rich table, 100 columns when piped; key numbers in the evidence column."""
    import shutil

    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100
    console = Console(width=width, highlight=False, soft_wrap=False)
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    colour = {"high": "bold red", "warn": "yellow", "info": "dim"}
    for name in ("job", "severity", "code", "title", "evidence"):
        table.add_column(name, justify="right" if name == "job" else "left")
    for r in records:
        ev = ", ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["evidence"].items()
        )
        table.add_row(  # Text: rule texts and evidence are never read as rich markup
            Text(str(r["job_id"])),
            Text(r["severity"], style=colour[r["severity"]]),
            Text(r["code"]),
            Text(r["title"]),
            Text(ev),
        )
    console.print(table)


def cmd_summary(args: argparse.Namespace) -> int:
    """Summarise inputs or a database (issue 19, item 3): terminal, --html, --json."""
    import shutil

    from iochar.report import summary

    paths, _, skipped = _expand_inputs(args.paths, args.kind)
    for reason, n in sorted(skipped.items()):
        print(f"skipped {n:,} file{'s' if n != 1 else ''}: {reason}", file=sys.stderr)
    if not paths:
        raise IocharError("no input to summarise in " + ", ".join(args.paths))
    if args.top < 0:
        raise IocharError(f"--top expects a count >= 0, got {args.top}")
    found = summary.summarize_paths(paths, db=args.db, wait=args.wait, top=args.top, kind=args.kind)
    if args.html:
        out = Path(args.html)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(summary.to_html(found), encoding="utf-8")
        except OSError as exc:
            raise IocharError(f"cannot write {args.html}: {exc.strerror or exc}") from exc
    if args.json:
        print(summary.to_json(found))
    else:
        from rich.console import Console

        # the terminal's width (COLUMNS when set), 100 columns when piped
        width = shutil.get_terminal_size((100, 24)).columns
        console = Console(width=width, highlight=False, soft_wrap=False, emoji=False)
        summary.render_terminal(found, console)
        if args.html:
            print(f"wrote {args.html}")
    return 1 if any(i.get("status") == "failed" for i in found.inputs) else 0


def cmd_snapshot(args: argparse.Namespace) -> int:
    from iochar.capture.walk import snapshot_dir

    t0 = time.perf_counter()
    n = snapshot_dir(args.dir, args.out, follow_symlinks=args.follow_symlinks)
    print(f"wrote {n:,} files under {args.dir} to {args.out} ({time.perf_counter() - t0:.2f} s)")
    return 0


def _run_report(name: str, out: str, params: list) -> object:
    from iochar import report

    return report.run(name, out, params=params)


def cmd_demo(args: argparse.Namespace) -> int:

    from iochar import report
    from iochar.datasets import demo

    t0 = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dbpath = out / "iochar.duckdb"
    print(f"iochar demo: building demo data and loading it into {dbpath}")
    tally = demo.LoadTally(lambda line: print(f"  {line}"), bar=sys.stderr.isatty())
    try:
        counts = demo.build_database(dbpath, data=args.data, work=out / "demo-data", progress=tally)
    finally:
        tally.close()
    print(f"  {tally.summary()}")
    print("what landed:")
    for table, n in counts.items():
        if n:
            print(f"  {table:<16} {n:>10,}")
    print(f"data ready in {time.perf_counter() - t0:.1f} s")
    if args.no_reports:
        return 0
    books = report.available()
    if not books:
        print("no notebooks found; nothing to report")
        return 0
    print(f"running {len(books)} notebooks ({args.jobs} at a time) ...")
    params = [("db", str(dbpath.resolve()))]
    jobs = max(1, args.jobs)
    results = []
    if jobs == 1:
        for b in books:
            results.append(report.run(b, out / f"{b.stem}.html", params=params))
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
            futs = [
                pool.submit(_run_report, str(b), str(out / f"{b.stem}.html"), params) for b in books
            ]
            results = [f.result() for f in futs]
    for r in results:
        state = "ok" if r.ok else f"FAILED: {r.error}"
        print(f"  {r.html}  {r.seconds:5.1f} s  {state}")
    index = report.write_index(
        results,
        out / "index.html",
        intro="Reports on the iochar demo database: seeded synthetic workloads with known "
        "truth and the real tool outputs bundled in data/ (see each folder's SOURCE.md).",
        counts=counts,
    )
    failed = [r for r in results if not r.ok]
    print(f"done in {time.perf_counter() - t0:.1f} s; open {index}")
    if failed:
        print(f"iochar: error: {len(failed)} report(s) failed", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from iochar import report

    if args.list or not args.name:
        for b in report.available():
            params = ", ".join(f"{k}={v!r}" for k, v in report.parameters(b).items())
            print(f"{b.stem}\n    {params}")
        return 0
    params = list(map(tuple, args.param))
    if args.db is not None:
        params.insert(0, ("db", args.db))
    book = report.resolve(args.name)
    out = args.out or f"{book.stem}.html"
    res = report.run(
        book,
        out,
        params=params,
        keep_notebook=args.keep_notebook,
        show_code=args.show_code,
        wait=args.wait,
    )
    if not res.ok:
        print(f"iochar: error: {book.stem}: {res.error} (report written to {out})", file=sys.stderr)
        return 1
    print(f"{out}: {res.title} ({res.seconds:.1f} s)")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from iochar.datasets import synth

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


def _calibrate_levels(args: argparse.Namespace) -> int:
    """``iochar calibrate --levels`` / ``--from F --db DB``: the capacity table."""
    from iochar.analyze import capacity
    from iochar.capture import capacity as sweep
    from iochar.load.capacity import capacity_document

    docs: list[tuple[str, bytes | str, str | None]] = []
    levels = [x for x in (args.levels or "").split(",") if x]
    if not levels and not args.inputs:
        levels = ["device"]  # --db alone: the device level of DIR
    if args.inputs:
        if len(levels) > 1:
            raise IocharError("--from takes one --levels value (the level of those inputs)")
        docs = [(f, f, levels[0] if levels else None) for f in args.inputs]
    else:
        if args.dir is None and set(levels) - {"mount"}:
            raise IocharError("calibrate --levels needs DIR (a directory to measure)")
        bad = sorted(set(levels) - set(sweep.SWEEP_LEVELS))
        if bad:
            raise IocharError(f"--levels: {bad} not among {sweep.SWEEP_LEVELS}")
        if "mount" in levels and not args.mount:
            raise IocharError("--levels mount needs --mount DIR (a directory on that mount)")
        reps = args.reps or (2 if args.quick else 3)
        runtime = args.runtime if args.runtime is not None else (0.1 if args.quick else 0.5)
        default_sizes = "65536,1048576" if args.quick else "4096,65536,1048576"
        sizes = [int(x) for x in (args.cap_sizes or default_sizes).split(",")]
        nprocs = [int(x) for x in args.nprocs.split(",")]
        for lv in levels:
            where = args.mount if lv == "mount" else args.dir
            print(f"iochar calibrate: {lv} level in {where}...", flush=True)
            got = sweep.run_sweep(
                where,
                lv,
                sizes=sizes,
                nprocs=nprocs,
                reps=reps,
                runtime_s=runtime,
                file_bytes=(16 << 20) if args.quick else (args.file_mib << 20),
            )
            doc = capacity_document(
                got["runs"],
                level=lv,
                target=got["target"],
                fstype=got["fstype"],
                notes=got["notes"],
            )
            out = os.path.join(args.json or where, f"iochar-capacity-{lv}.json")
            if args.json and not os.path.isdir(args.json):
                out = f"{os.path.splitext(args.json)[0]}-{lv}.json"
            with open(out, "wb") as fh:
                fh.write(doc)
            print(f"  wrote {out}")
            docs.append((out, out, None))
    db = _open(args)
    try:
        for _name, src, lv in docs:
            res = capacity.store_capacity(db, src, level=lv)
            print(f"  {res.summary()}")
        cap = capacity.capacity(db)
    finally:
        db.close()
    print(f"capacity ({cap.evidence['runs']} runs; mean of repetitions, 95% Student-t CI):")
    print(
        f"  {'level':<9}{'op':<6}{'access':<11}{'size':>10}{'np':>4}{'MiB/s':>10}"
        f"{'95% CI':>22}{'n':>3}"
    )
    for r in cap.itertuples():
        ci = "" if r.n < 2 else f"{r.ci_lo / 2**20:.1f} .. {r.ci_hi / 2**20:.1f}"
        print(
            f"  {r.level:<9}{r.op:<6}{r.access:<11}{int(r.size_bytes):>10}{r.nprocs:>4}"
            f"{r.rate / 2**20:>10.1f}{ci:>22}{r.n:>3}"
        )
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    import pandas as pd

    if args.levels or args.db:
        return _calibrate_levels(args)

    from iochar.analyze import fsu
    from iochar.capture import fio
    from iochar.load import bench

    if args.inputs:
        table = pd.concat([bench.read_calibration(f) for f in args.inputs], ignore_index=True)
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
            f"(about {2 * len(fio.calibration_sizes(factor=factor)) * runtime:.0f} s)...",
            flush=True,
        )
        run = fio.run_fio(
            args.dir,
            sizes=fio.calibration_sizes(factor=factor),
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
        f"  mean |error| {cmp.evidence['mean_abs_error']:.1%}, "
        f"max |error| {cmp.evidence['max_abs_error']:.1%} (in-sample: the same runs were fitted)"
    )
    if json_path:
        print(f"raw fio output: {json_path}")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """``iochar ingest SRC... --lake DIR``: many inputs on Dask into a lake (iochar.lake)."""
    from iochar.lake.ingest import ingest, print_report

    paths, _, skipped = _expand_inputs(args.paths, args.kind)
    for reason, n in sorted(skipped.items()):
        print(f"skipped {n:,} file{'s' if n != 1 else ''}: {reason}")
    if not paths:
        raise IocharError("no input to ingest in " + ", ".join(args.paths))
    bar = None
    if not args.no_progress and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(paths), unit="input", file=sys.stderr, leave=False)

    def tick(done: int, total: int) -> None:
        if bar is not None:
            bar.update(done - bar.n)

    if args.workers is not None and args.workers < 1:
        raise IocharError(f"--workers must be >= 1, got {args.workers}")
    try:
        report = ingest(
            paths,
            args.lake,
            workers=args.workers,
            scheduler=args.scheduler,
            kind=args.kind,
            strict=not args.tolerant,
            progress=tick,
            on_dashboard=lambda link: print(f"Dask dashboard: {link}", flush=True),
        )
    finally:
        if bar is not None:
            bar.close()
    print_report(report)
    return 1 if report.errors else 0


_COMMANDS = {
    "load": cmd_load,
    "info": cmd_info,
    "sql": cmd_sql,
    "export": cmd_export,
    "insights": cmd_insights,
    "summary": cmd_summary,
    "snapshot": cmd_snapshot,
    "synth": cmd_synth,
    "demo": cmd_demo,
    "report": cmd_report,
    "calibrate": cmd_calibrate,
    "ingest": cmd_ingest,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``iochar`` command; returns the exit status."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        status = _COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, inside the try
        return status
    except BrokenPipeError:
        # the reader went away (``iochar info | head``): stop quietly, as the Python docs
        # advise (signal module, "Note on SIGPIPE"): point stdout at devnull so the flush
        # at exit cannot raise again, and exit 1 as Python does on EPIPE
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
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
