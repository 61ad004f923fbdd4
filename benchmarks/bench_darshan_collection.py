"""Load every log of the darshan-logs collection: how many load, how many are refused.

The darshan-hpc project's public collection of example Darshan logs
(github.com/darshan-hpc/darshan-logs) has a log of every Darshan release (3.0.0 to
3.5.0, log formats 3.00 to 3.41) and logs of every module. Target (issue 17): every
log pydarshan reads, iochar loads, and every record and counter agrees with
pydarshan's backend. ``tests/load/test_darshan_collection.py`` checks the 14 logs
shipped in ``data/darshan/darshan-logs/``; this script sweeps a local copy of the
whole collection, which a fresh clone does not have.

For each ``*.darshan`` file (a directory searched recursively, or ``--git`` a clone
or bare mirror of the collection, read with ``git ls-tree`` / ``git cat-file``):

* iochar: ``DarshanLoader().parse`` to the end; "loaded" or "refused" with the
  first line of the error;
* pydarshan: ``DarshanReport(path, read_all=True)``, in a fresh interpreter per log
  (libdarshan-util's APMPI/APXC reader keeps process-wide state);
* with ``--agree``, every record and counter of every module but DXT and LUSTRE,
  read by pydarshan's backend in a fresh interpreter
  (``tests/load/_pydarshan_truth.py``), against iochar's ``module_counters``, and
  the modules flagged incomplete against libdarshan-util's ``partial_flag``.

It prints one line per log and the totals, e.g. ``84 logs: iochar loads 84, refuses
0; pydarshan reads 84; agree 84/84``, and exits 1 when iochar refuses a log that
pydarshan reads or (``--agree``) a counter differs.

    python benchmarks/bench_darshan_collection.py DIR [--agree]
    python benchmarks/bench_darshan_collection.py --git /path/to/darshan-logs [--agree]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE.parent / "tests" / "load" / "_pydarshan_truth.py"

_PYDARSHAN = (
    "import sys, darshan\n"
    "r = darshan.DarshanReport(sys.argv[1], read_all=True)\n"
    "print(len(r.modules))\n"
)


def _from_git(repo: Path, out: Path) -> list[Path]:
    """Write every ``*.darshan`` blob of HEAD into ``out``; skip blobs the copy lacks."""
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    paths = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        if not path.endswith(".darshan"):
            continue
        sha = meta.split()[2]
        blob = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "blob", sha], capture_output=True
        )
        if blob.returncode:
            print(f"  absent from this copy: {path}")
            continue
        dest = out / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blob.stdout)
        paths.append(dest)
    return paths


def _iochar(path: Path):
    """(error or None, {module: records}, module_counters rows as {(module, rec): ...})."""
    import pyarrow as pa

    from iochar.load.darshan import DarshanLoader

    try:
        chunks = list(DarshanLoader().parse(path))
    except Exception as exc:  # noqa: BLE001 - the sweep reports every refusal
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}", None, None
    mc = [c.tables["module_counters"] for c in chunks if "module_counters" in c.tables]
    files = [c.tables["files"] for c in chunks if "files" in c.tables]
    rid = {}
    for f in files:
        rid.update(zip(f["file_id"].to_pylist(), f["record_id"].to_pylist(), strict=True))
    recs: dict[tuple[str, int], tuple] = {}
    if mc:
        d = pa.concat_tables(mc).to_pydict()
        cols = ("module", "record", "file_id", "rank", "counter", "value")
        for mod, rec, fid, rank, counter, value in zip(*(d[c] for c in cols), strict=True):
            key = (mod, rec)
            if key not in recs:
                recs[key] = (rid.get(fid), -1 if rank is None else rank, {})
            recs[key][2][counter] = value
    counts = {m: e.get("records") for m, e in chunks[-1].meta["modules"].items()}
    recs["incomplete"] = chunks[0].meta["incomplete"]
    return None, counts, recs


def _disagreements(path: Path, recs) -> list[str]:
    out = subprocess.run([sys.executable, str(TRUTH), str(path)], capture_output=True, text=True)
    if out.returncode:
        return [f"pydarshan backend failed: {out.stderr.strip().splitlines()[-1:]}"]
    truth = json.loads(out.stdout)
    want = truth["records"]
    bad = []
    flagged = recs.pop("incomplete")
    if flagged != truth["partial"]:
        bad.append(f"incomplete modules {flagged}, pydarshan {truth['partial']}")
    ours: dict[str, list] = {}
    for (mod, _), r in sorted(recs.items(), key=lambda kv: kv[0][1]):
        ours.setdefault(mod, []).append(r)
    for module, theirs in want.items():
        mine = ours.get(module, [])
        if len(mine) != len(theirs):
            bad.append(f"{module}: {len(mine)} records, pydarshan {len(theirs)}")
            continue
        if all(r[0] is not None for r in mine):
            by_key = {(r[0], r[1]): r[2] for r in mine}
            pairs = [(c, by_key.get((i, rk))) for i, rk, c in theirs]
        else:
            pairs = [(c, r[2]) for (_, _, c), r in zip(theirs, mine, strict=True)]
        for c, m in pairs:
            if m is None:
                bad.append(f"{module}: a record pydarshan has is missing")
                break
            for k, v in c.items():
                if isinstance(v, str):
                    continue
                b = m.get(k)
                same = (v is None and (b is None or math.isnan(b))) or (
                    v is not None and b is not None and (v == b or abs(v - b) <= 1e-12 * abs(v))
                )
                if not same:
                    bad.append(f"{module}: {k} = {b}, pydarshan {v}")
                    break
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", type=Path, help="a directory of .darshan logs")
    ap.add_argument("--git", type=Path, help="a clone or bare mirror of darshan-logs")
    ap.add_argument("--agree", action="store_true", help="compare every counter too")
    args = ap.parse_args(argv)
    if (args.dir is None) == (args.git is None):
        ap.error("give a directory or --git")
    with tempfile.TemporaryDirectory() as tmp:
        if args.git is not None:
            logs = _from_git(args.git, Path(tmp))
            root = Path(tmp)
        else:
            logs = sorted(args.dir.rglob("*.darshan"))
            root = args.dir
        loaded = refused = pyd = agree = 0
        failing = 0
        t0 = time.perf_counter()
        for p in sorted(logs):
            name = p.relative_to(root).as_posix()
            err, counts, recs = _iochar(p)
            r = subprocess.run(
                [sys.executable, "-c", _PYDARSHAN, str(p)], capture_output=True, text=True
            )
            pd_ok = r.returncode == 0
            pyd += pd_ok
            version = p.read_bytes()[:4].decode("ascii", "replace")
            if err is not None:
                refused += 1
                failing += pd_ok
                print(f"REFUSED {version} {name}: {err}")
                continue
            loaded += 1
            line = f"loaded  {version} {name}: " + ", ".join(f"{m} {n}" for m, n in counts.items())
            if recs["incomplete"]:
                line += f"; incomplete: {', '.join(recs['incomplete'])}"
            if args.agree:
                bad = _disagreements(p, recs)
                agree += not bad
                failing += bool(bad)
                line += "" if not bad else f"  DISAGREES: {'; '.join(bad[:3])}"
            print(line)
        took = time.perf_counter() - t0
    total = loaded + refused
    summary = f"{total} logs: iochar loads {loaded}, refuses {refused}; pydarshan reads {pyd}"
    if args.agree:
        summary += f"; every counter agrees with pydarshan on {agree}/{loaded}"
    print(f"{summary} ({took:.0f} s)")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
