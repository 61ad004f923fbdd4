"""Live captures: the real tools on this machine, loaded as they print.

sysstat's ``iostat`` (installed by .ci/run when missing) and the kernel's
``/proc/diskstats`` sampled by the documented shell loop; each test skips
when its tool is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

import iochar

has_iostat = shutil.which("iostat") is not None
has_diskstats = os.path.exists("/proc/diskstats")


def _busy_io(tmp_path):
    """Some real reads and writes while the sampler runs (bounded: 8 MiB)."""
    p = tmp_path / "io.bin"
    with open(p, "wb") as fh:
        fh.write(os.urandom(8 << 20))
        fh.flush()
        os.fsync(fh.fileno())
    return p


@pytest.mark.skipif(not has_iostat, reason="sysstat's iostat is not installed")
@pytest.mark.parametrize("json_out", [False, True])
def test_live_iostat(tmp_path, json_out):
    args = ["iostat", "-x", "-t"] + (["-o", "JSON"] if json_out else []) + ["1", "3"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, env={**os.environ, "LC_ALL": "C"})
    _busy_io(tmp_path)
    out, _ = proc.communicate(timeout=60)
    src = tmp_path / ("live.json" if json_out else "live.iostat")
    src.write_bytes(out)
    db = iochar.connect(":memory:")
    res = db.load(src)
    assert res.kind == "iostat"
    rows = db.sql(
        "SELECT count(DISTINCT ts), min(interval_s), max(interval_s) FROM counters "
        "WHERE target <> 'cpu'"
    ).fetchall()[0]
    # 3 reports: the first (since boot) gives no interval, the next two do
    assert rows[0] == 2 and 0.5 <= rows[1] <= rows[2] <= 3
    neg = db.sql("SELECT count(*) FROM counters WHERE value < 0").fetchall()[0][0]
    assert neg == 0


@pytest.mark.skipif(not has_diskstats, reason="no /proc/diskstats")
def test_live_diskstats(tmp_path):
    out = tmp_path / "live.diskstats"
    loop = "for i in 1 2 3; do date +%s.%N; cat /proc/diskstats; sleep 0.5; done"
    with open(out, "wb") as fh:
        proc = subprocess.Popen(["sh", "-c", loop], stdout=fh)
        _busy_io(tmp_path)
        proc.wait(timeout=60)
    db = iochar.connect(":memory:")
    res = db.load(out)
    assert res.kind == "diskstats"
    ts, bad = db.sql(
        "SELECT count(DISTINCT ts), count(*) FILTER (WHERE value < 0) FROM counters"
    ).fetchall()[0]
    assert ts == 2 and bad == 0
    # every device of the first snapshot has a series
    devices = {line.split()[2] for line in out.read_text().splitlines() if len(line.split()) > 13}
    got = {r[0] for r in db.sql("SELECT DISTINCT target FROM counters").fetchall()}
    assert got <= devices and len(got) >= 1
