"""iostat text parsed in many blocks on many threads gives the rows of a one-block parse.

Issue 18 item 3: large text inputs are split at line boundaries into blocks parsed
in parallel. The state that crosses blocks (the report a line is in, the previous
report's time, the Device/avg-cpu header in force, the line after an avg-cpu header,
device name codes) must not change a single row. Checked on the real sysstat
captures in ``data/iostat`` (see its SOURCE.md) with blocks forced down to a few
lines, so boundaries fall inside reports, right after headers and between a
timestamp and its lines.
"""

from __future__ import annotations

import lzma

import polars as pl
import pyarrow as pa
import pytest

import iochar.load.iostat as iostat_mod
from iochar import load
from iochar.errors import InputError
from tests.conftest import DATA_DIR

IOSTAT = DATA_DIR / "iostat"
TEXT = sorted(IOSTAT.glob("*.iostat"))  # the 318-report .xz: test_mapped_file_equals...


def _rows(src, *, strict=True) -> tuple[pl.DataFrame, dict, int]:
    """Rows (dictionary columns as text, in the order parsed), the meta, skipped lines."""
    chunks = list(load.parse(src, "iostat", strict=strict))
    tbs = [c.tables["counters"] for c in chunks if c.tables]
    skips = chunks[-1].skips
    if not tbs:
        return pl.DataFrame(), chunks[-1].meta, skips.count if skips else 0
    tb = pa.concat_tables([t.cast(tbs[0].schema) for t in tbs])
    df = pl.from_arrow(tb).with_columns(pl.col("target", "metric", "quality").cast(pl.String))
    return df, chunks[-1].meta, skips.count if skips else 0


def _small_blocks(monkeypatch, nbytes: int, threads: int) -> None:
    monkeypatch.setattr(iostat_mod, "_BLOCK_BYTES", nbytes)
    monkeypatch.setattr(iostat_mod, "_MIN_BLOCK_BYTES", nbytes)
    monkeypatch.setenv("IOCHAR_PARSE_THREADS", str(threads))


@pytest.mark.parametrize("path", TEXT, ids=lambda p: p.name)
@pytest.mark.parametrize("nbytes", [1, 97, 1000])
def test_many_blocks_on_threads_equal_one_block(path, nbytes, monkeypatch):
    """Every row and value alike, whatever the block size; the order too, whatever the threads.

    Rows come block by block, in input order; within a block, device rows of each
    Device layout and then avg-cpu rows, metric by metric (the module's documented
    order). The blocks depend on the input and the block size only, so the thread
    count never changes the order; another block size gives the same rows.
    """
    monkeypatch.setenv("IOCHAR_PARSE_THREADS", "1")
    whole, meta, _ = _rows(path)
    assert whole.height > 0
    _small_blocks(monkeypatch, nbytes, 1)
    one_thread, meta1, _ = _rows(path)
    _small_blocks(monkeypatch, nbytes, 3)
    threads, meta3, _ = _rows(path)
    assert meta1 == meta3 == meta
    assert threads.equals(one_thread)  # same order, row for row
    key = whole.columns
    assert threads.sort(key).equals(whole.sort(key))


def test_mapped_file_equals_bytes_and_compressed(tmp_path, monkeypatch):
    """A plain file (read through a mapping) parses as its bytes and its xz copy do.

    The 318-report capture in 4 KiB blocks: about 125 blocks, so boundaries fall
    everywhere in its reports; mapped or streamed, the blocks (and rows) are the same.
    """
    raw = lzma.decompress((IOSTAT / "rhel6-sysstat9-x-t-m-318s.iostat.xz").read_bytes())
    plain = tmp_path / "big.iostat"
    plain.write_bytes(raw)
    _small_blocks(monkeypatch, 4096, 2)
    a, meta, _ = _rows(plain)
    b, _, _ = _rows(raw)
    c, _, _ = _rows(IOSTAT / "rhel6-sysstat9-x-t-m-318s.iostat.xz")
    # 318 one-second reports: the first starts the series, 317 intervals per disk
    sda = a.filter((pl.col("target") == "sda") & (pl.col("metric") == "read_bytes"))
    assert sda.height == 317 and (sda["interval_s"] == 1.0).all()
    assert meta["skipped_first_reports"] == 1
    assert a.equals(b) and a.equals(c)  # same blocks: same order


@pytest.mark.parametrize("nbytes", [1, 200, 5000])
def test_first_error_in_input_order_with_many_blocks(nbytes, monkeypatch, tmp_path):
    """With blocks parsed ahead on threads, the error raised is still the input's first."""
    lines = (IOSTAT / "rhel6-sysstat9-x-t-m.iostat").read_text().splitlines(keepends=True)
    lines[200] = "sdz  1.00 2.00\n"  # wrong field count
    lines[400] = "sdq  x y z\n"  # a later error
    path = tmp_path / "bad.iostat"
    path.write_text("".join(lines))
    _small_blocks(monkeypatch, nbytes, 3)
    with pytest.raises(InputError) as exc:
        _rows(path)
    assert exc.value.line == 201
    _, _, skipped = _rows(path, strict=False)
    assert skipped == 2


def test_tolerant_mode_alike_with_many_blocks(monkeypatch):
    """Skipped lines and kept rows do not depend on the blocks (tolerant mode)."""
    text = (IOSTAT / "rhel8-sysstat11.7.3-x-t-m.iostat").read_text()
    lines = text.splitlines(keepends=True)
    for i in range(30, len(lines), 37):
        lines[i] = "garbage here\n"
    raw = "".join(lines).encode()
    monkeypatch.setenv("IOCHAR_PARSE_THREADS", "1")
    whole, _, skipped = _rows(raw, strict=False)
    assert skipped > 0
    _small_blocks(monkeypatch, 150, 2)
    small, _, skipped2 = _rows(raw, strict=False)
    assert skipped2 == skipped
    assert small.sort(whole.columns).equals(whole.sort(whole.columns))


def _targets(src) -> list[tuple[list[int], list[str]]]:
    """The ``target`` column as Arrow holds it: per chunk, its codes and its dictionary."""
    out = []
    for c in load.parse(src, "iostat"):
        for tb in c.tables.values():
            for chunk in tb.column("target").chunks:
                out.append((chunk.indices.to_pylist(), chunk.dictionary.to_pylist()))
    return out


@pytest.mark.parametrize("nbytes", [300, 5000, 1 << 20])
def test_device_codes_keyed_on_workers_equal_ordered_encoding(nbytes, monkeypatch):
    """Device names keyed on the workers get the codes the ordered stage would give.

    Two real runs back to back (sysstat 12.6.1 on one disk, then with ``-p``
    partitions): the second run's names are new in a later block, and those of its
    first report (no interval, no rows) only in some blocks. One NVMe-style name of
    10 bytes (longer than a key's 8) takes the general path in the blocks it is in.
    Codes and dictionaries must be those of the per-line encoding in the ordered
    stage (``_block_names`` off), on one thread or three.
    """
    first = (IOSTAT / "vm-sysstat12.6.1-x-t.iostat").read_bytes()
    second = (IOSTAT / "vm-sysstat12.6.1-x-t-p.iostat").read_bytes()
    assert b"zram0 " in second
    raw = first + second.replace(b"zram0 ", b"nvme10n1p1 ", 3)
    _small_blocks(monkeypatch, nbytes, 1)
    monkeypatch.setattr(iostat_mod, "_block_names", lambda blk, lines: None)
    ordered = _targets(raw)
    monkeypatch.undo()
    for threads in (1, 3):
        _small_blocks(monkeypatch, nbytes, threads)
        assert _targets(raw) == ordered
    names = {n for _, d in ordered for n in d}
    assert {"loop0p1", "nvme10n1p1", "vda"} <= names
