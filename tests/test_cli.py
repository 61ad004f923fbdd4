"""The iochar command, run as a user would (a subprocess) and in-process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from iochar.cli import main

CSV = b"op,t_start,size,path\nwrite,0.5,4096,/a\nread,0.7,10,/b\n"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "iochar.cli", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "cmd",
    [[], ["load"], ["info"], ["sql"], ["demo"], ["export"], ["snapshot"], ["synth"], ["insights"]],
)
def test_help_everywhere(cmd):
    r = run(*cmd, "--help")
    assert r.returncode == 0 and "usage: iochar" in r.stdout


def test_load_lists_kinds_in_help():
    out = run("load", "--help").stdout
    for kind in ("trace-csv", "trace-parquet", "strace", "darshan"):
        assert kind in out


def test_load_info_sql_export(tmp_path, capsys):
    db = str(tmp_path / "c.duckdb")
    src = tmp_path / "t.csv"
    src.write_bytes(CSV)
    assert main(["load", str(src), "--db", db]) == 0
    assert "ops 2" in capsys.readouterr().out
    assert main(["load", str(src), "--db", db]) == 0
    assert "already loaded as source 0" in capsys.readouterr().out
    assert main(["info", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "trace-csv" in out and "ops" in out
    assert "1 input " in out and "t.csv" not in out  # grouped by kind; -v names each
    assert main(["info", "-v", "--db", db]) == 0
    assert "t.csv" in capsys.readouterr().out
    assert (
        main(
            [
                "sql",
                "SELECT op, sum(size) AS b FROM ops GROUP BY op ORDER BY op",
                "--db",
                db,
                "--format",
                "csv",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines() == ["op,b", "read,10", "write,4096"]
    out_csv = tmp_path / "back.csv"
    assert main(["export", str(out_csv), "--db", db]) == 0
    assert out_csv.read_text().count("\n") == 3
    # an unknown suffix is refused, nothing written (it used to write CSV into it)
    assert main(["export", str(tmp_path / "back.txt"), "--db", db]) == 2
    assert "ending in .csv or .parquet" in capsys.readouterr().err
    assert not (tmp_path / "back.txt").exists()


def test_bad_input_is_one_line_no_traceback(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"op,t_start\nwrite,1\nread,x\n")
    db = str(tmp_path / "c.duckdb")
    r = run("load", str(bad), "--db", db)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"iochar: error: {bad}:3: expected column 't_start' to be double, got 'x' [kind=trace-csv]"
    ]
    assert "Traceback" not in r.stderr


def test_unknown_kind_and_missing_db(tmp_path):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)))
    r = run("load", str(blob), "--db", str(tmp_path / "x.duckdb"))
    assert r.returncode == 2 and "one of the known input kinds" in r.stderr
    r = run("info", "--db", str(tmp_path / "missing.duckdb"))
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_bad_sql_is_one_line(tmp_path, capsys):
    db = str(tmp_path / "c.duckdb")
    assert main(["info", "--db", db]) == 2  # no database yet
    import iochar

    iochar.connect(db).close()
    assert main(["sql", "SELEC nonsense", "--db", db]) == 2
    assert "query failed" in capsys.readouterr().err


def test_synth_command_writes_loadable_trace(tmp_path, capsys):
    out = tmp_path / "venus.parquet"
    assert main(["synth", "venus", "-o", str(out), "--scale", "0.01", "--seed", "3"]) == 0
    said = capsys.readouterr().out
    assert "truth in" in said and "staging" in said
    db = str(tmp_path / "s.duckdb")
    assert main(["load", str(out), "--db", db]) == 0
    assert "trace-parquet" in capsys.readouterr().out
    assert main(["synth", "nope", "-o", str(out)]) == 2


def test_load_a_folder_and_a_pattern(tmp_path, capsys):
    """Issue 19 item 5: `iochar load DIR` and globs, recursive; non-inputs skipped and
    counted; a bad input is reported, the others land, and the exit status says so."""
    import shutil
    from pathlib import Path

    import iochar

    data = Path(__file__).resolve().parents[1] / "data"
    root = tmp_path / "archive"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".hidden").mkdir()
    shutil.copy(data / "darshan" / "example.darshan", root / "a")
    shutil.copy(data / "strace" / "ckpt_tt.strace", root / "a" / "b")
    shutil.copy(data / "strace" / "workers_o.strace", root / ".hidden")  # left out
    shutil.copy(data / "darshan" / "SOURCE.md", root / "a")  # no loader knows it
    (root / "a" / "b" / "cut.csv").write_bytes(b"op,t_start\nwrite,abc\n")  # bad trace-csv
    db = str(tmp_path / "f.duckdb")
    assert main(["load", str(root), "--db", db]) == 1
    out = capsys.readouterr().out
    assert "skipped 1 file: not an input any loader recognises" in out
    assert "cut.csv: not loaded:" in out and "'abc'" in out
    assert "3 inputs: 2 loaded, 0 already in the database, 1 failed, 1 file skipped" in out
    with iochar.connect(db, read_only=True) as store:
        kinds = store.sql("SELECT kind FROM sources ORDER BY kind").fetchall()
        assert kinds == [("darshan",), ("strace",)]
    # a quoted pattern, recursive: the strace capture again is a no-op
    assert main(["load", str(root / "**" / "*.strace"), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "1 input: 0 loaded, 1 already in the database, 0 failed" in out
    # a folder with nothing to load is an error, not silence
    (tmp_path / "empty").mkdir()
    assert main(["load", str(tmp_path / "empty"), "--db", db]) == 2


def test_load_many_with_workers_lands_what_one_process_lands(tmp_path, capsys):
    """Issue 18 item 3 / 19 item 5: `iochar load --workers 2` parses in two processes
    and the database holds exactly what a load in one process gives."""
    from pathlib import Path

    import iochar

    data = Path(__file__).resolve().parents[1] / "data"
    folder = str(data / "strace")
    one, two = str(tmp_path / "one.duckdb"), str(tmp_path / "two.duckdb")
    assert main(["load", folder, "--db", one, "--workers", "1"]) == main(
        ["load", folder, "--db", two, "--workers", "2"]
    )
    out = capsys.readouterr().out
    assert "failed" in out
    tables = ("sources", "jobs", "files", "ops")
    got = {}
    for db in (one, two):
        with iochar.connect(db, read_only=True) as store:
            got[db] = {
                t: store.sql(
                    f'SELECT * EXCLUDE (loaded_at) FROM "{t}" ORDER BY ALL'
                    if t == "sources"
                    else f'SELECT * FROM "{t}" ORDER BY ALL'
                ).fetchall()
                for t in tables
            }
    assert got[one] == got[two] and got[one]["ops"]
    assert main(["load", folder, "--db", one, "--workers", "0"]) == 2  # refused, one line


def test_sql_table_fits_100_columns(tmp_path, capsys):
    """Issue 19 item 5: wide values (a source's JSON meta) are cut with an ellipsis
    on one line each instead of wrapping over dozens of lines; numbers stay whole."""
    from pathlib import Path

    db = str(tmp_path / "s.duckdb")
    log = Path(__file__).resolve().parents[1] / "data" / "darshan" / "dxt.darshan"
    assert main(["load", str(log), "--db", db]) == 0
    capsys.readouterr()
    q = "SELECT source_id, uri, meta, rows FROM sources"
    assert main(["sql", q, "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines), max(map(len, lines))
    assert len(lines) == 4 and lines[-1] == "(1 row)"  # header, rule, the row, count
    assert "…" in lines[2] and lines[2].rstrip().endswith("27092")
    assert main(["sql", "SELECT NULL AS x", "--db", db]) == 0
    assert "NULL" in capsys.readouterr().out


def test_insights_table_and_json(tmp_path, capsys):
    """Issue 19 item 4: ``iochar insights`` as a table (100 columns when piped) and as a
    JSON list of objects with the keys the issue names; --job and --min-severity filter."""
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    db = str(tmp_path / "i.duckdb")
    logs = [data / "darshan" / "dxt.darshan", data / "darshan" / "example.darshan"]
    assert main(["load", *map(str, logs), "--db", db]) == 0
    capsys.readouterr()

    assert main(["insights", "--db", db, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    keys = {"job_id", "code", "topic", "severity", "title", "evidence", "recommendation"}
    assert found and all(set(f) == keys for f in found)
    assert all(isinstance(v, (int, float)) for f in found for v in f["evidence"].values())
    # dxt.darshan: 1462 s of metadata time on one record (Drishti's limit is 30 s)
    dxt_job = next(f["job_id"] for f in found if f["code"] == "METADATA-1")
    assert {f["job_id"] for f in found} == {0, 1}
    assert {"METADATA-1", "SMALL-IO-1"} <= {f["code"] for f in found if f["job_id"] == dxt_job}

    assert main(["insights", "--db", db, "--json", "--min-severity", "high", "--job", "1"]) == 0
    high = json.loads(capsys.readouterr().out)
    assert high and {(f["job_id"], f["severity"]) for f in high} == {(1, "high")}

    assert main(["insights", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines), max(map(len, lines))
    assert "METADATA-1" in "\n".join(lines)
    assert lines[-1].startswith(f"({len(found)} findings at info or above;")


def test_sql_and_insights_print_names_from_the_data_as_text(tmp_path, capsys):
    """A path is data: rich markup in it ('[red]', an unmatched '[/bold]') is printed
    as written, not styled, and does not crash the table (it raised MarkupError)."""
    db = str(tmp_path / "m.duckdb")
    src = tmp_path / "m.csv"
    src.write_bytes(b"op,t_start,size,path\nwrite,0.5,4096,[red]x[/]y[/bold]\n")
    assert main(["load", str(src), "--db", db]) == 0
    capsys.readouterr()
    assert main(["sql", 'SELECT path AS "[b]p" FROM files', "--db", db]) == 0
    out = capsys.readouterr().out
    assert "[red]x[/]y[/bold]" in out and "[b]p" in out
    assert main(["insights", "--db", db]) == 0
