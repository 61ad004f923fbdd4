"""``iochar demo``: the main job on the bundled data."""

from __future__ import annotations

import iochar
from iochar.cli import main
from iochar.datasets import demo_inputs


def test_demo_loads_every_bundled_input(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    inputs = demo_inputs()
    kinds = {k for _, k in inputs}
    assert {"strace", "darshan", "trace-csv", "trace-parquet"} <= kinds
    with iochar.connect(str(tmp_path / "iochar.duckdb"), read_only=True) as db:
        assert db.sql("SELECT count(*) FROM sources").fetchall()[0][0] == len(inputs)
        # the IOR run: the POSIX-layer bytes equal its trace-csv export of the same segments
        rows = db.sql(
            "SELECT s.kind, sum(o.size) FROM ops o JOIN jobs j USING (job_id) "
            "JOIN sources s USING (source_id) "
            "WHERE s.uri LIKE '%ior%' AND o.call IS DISTINCT FROM 'DXT_MPIIO' GROUP BY 1"
        ).fetchall()
    assert len({b for _, b in rows}) == 1, rows
    assert "what landed" in out and "ops" in out
