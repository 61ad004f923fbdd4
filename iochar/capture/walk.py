"""A fast file-system walker that writes a snapshot as Parquet.

:func:`snapshot_dir` walks a directory tree with :func:`os.scandir`, batches
the ``stat`` results of regular files into Arrow columns and writes them as
Parquet in the ``snapshot_files`` layout, with ``root`` and ``taken_at`` in
the file metadata. The ``snapshot`` loader (:mod:`iochar.load.snapshot`)
reads the result; ``iochar snapshot DIR -o FILE`` runs it from the command
line.

Examples
--------
>>> import pathlib, tempfile, iochar
>>> from iochar.capture.walk import snapshot_dir
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.dat").write_bytes(b"x" * 10)
>>> snapshot_dir(d, d / "snap.parquet")  # the output file itself is not listed
1
>>> db = iochar.connect(":memory:")
>>> db.load(d / "snap.parquet").rows["snapshot_files"]
1
"""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from iochar.errors import IocharError
from iochar.load.snapshot import PARQUET_MARKER

__all__ = ["snapshot_dir", "WALK_SCHEMA"]

_TS = pa.timestamp("us")
#: Column layout of the walker's Parquet (``format`` holds the sniffing marker).
WALK_SCHEMA = pa.schema(
    [
        ("format", pa.string()),
        ("path", pa.string()),
        ("size", pa.int64()),
        ("atime", _TS),
        ("mtime", _TS),
        ("ctime", _TS),
        ("uid", pa.int64()),
    ]
)


class _Batch:
    __slots__ = ("path", "size", "atime", "mtime", "ctime", "uid")

    def __init__(self) -> None:
        for k in self.__slots__:
            setattr(self, k, [])

    def __len__(self) -> int:
        return len(self.path)

    def table(self) -> pa.Table:
        n = len(self.path)

        def us(ns: list[int]) -> pa.Array:  # nanoseconds -> microseconds, rounded
            a = np.asarray(ns, dtype=np.int64)
            return pa.array((a + 500) // 1000, pa.int64()).cast(_TS)

        return pa.table(
            {
                "format": pa.repeat(pa.scalar(PARQUET_MARKER), n),
                "path": _paths(self.path),
                "size": pa.array(self.size, pa.int64()),
                "atime": us(self.atime),
                "mtime": us(self.mtime),
                "ctime": us(self.ctime),
                "uid": pa.array(self.uid, pa.int64()),
            },
            schema=WALK_SCHEMA,
        )


def snapshot_dir(
    root: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    follow_symlinks: bool = False,
    batch_rows: int = 256 * 1024,
) -> int:
    """Walk ``root`` and write a snapshot of its regular files as Parquet.

    Parameters
    ----------
    root : str or os.PathLike
        Directory to walk.
    out : str or os.PathLike
        Parquet file to write (replaced if it exists).
    follow_symlinks : bool, default False
        Follow symbolic links to files and directories (directory loops are
        walked once); by default links are not files and are skipped, as
        ``find -type f`` does.
    batch_rows : int, default 262144
        Files per Arrow batch / Parquet row group; bounds memory.

    Returns
    -------
    int
        Regular files written.

    Raises
    ------
    IocharError
        ``root`` is not a directory.

    Notes
    -----
    Columns: ``path`` (absolute), ``size`` [bytes], ``atime``, ``mtime``,
    ``ctime`` (naive UTC timestamps, rounded to the microsecond) and
    ``uid``, plus the constant ``format`` marker; the schema metadata holds
    ``iochar.root`` and ``iochar.taken_at`` (ISO 8601, UTC) and
    ``iochar.errors`` (entries that could not be read, e.g. permission denied).
    Paths that are not valid UTF-8 are written with surrogate escapes
    replaced (``os.fsdecode`` then ``backslashreplace``).
    """
    top = os.path.abspath(os.fspath(root))
    if not os.path.isdir(top):
        raise IocharError(f"cannot snapshot {top!r}: not a directory")
    taken_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    errors = 0
    seen: set[tuple[int, int]] = set()
    if follow_symlinks:
        st = os.stat(top)
        seen.add((st.st_dev, st.st_ino))
    batch = _Batch()
    total = 0
    tmp = os.path.abspath(os.fspath(out)) + ".part"
    own = {tmp, tmp[: -len(".part")]}  # never list the snapshot being written
    writer = pq.ParquetWriter(
        tmp,
        WALK_SCHEMA,
        compression={c: ("NONE" if c == "format" else "ZSTD") for c in WALK_SCHEMA.names},
        use_dictionary=["format", "path"],
    )
    try:
        stack = [top]
        while stack:
            d = stack.pop()
            try:
                it = os.scandir(d)
            except OSError:
                errors += 1
                continue
            with it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=follow_symlinks):
                            if follow_symlinks:
                                s = e.stat()
                                key = (s.st_dev, s.st_ino)
                                if key in seen:
                                    continue
                                seen.add(key)
                            stack.append(e.path)
                            continue
                        if not e.is_file(follow_symlinks=follow_symlinks):
                            continue
                        s = e.stat(follow_symlinks=follow_symlinks)
                    except OSError:
                        errors += 1
                        continue
                    if e.path in own:
                        continue
                    batch.path.append(e.path)
                    batch.size.append(s.st_size)
                    batch.atime.append(s.st_atime_ns)
                    batch.mtime.append(s.st_mtime_ns)
                    batch.ctime.append(s.st_ctime_ns)
                    batch.uid.append(s.st_uid)
            if len(batch) >= batch_rows:
                total += len(batch)
                writer.write_table(batch.table())
                batch = _Batch()
        total += len(batch)
        writer.write_table(batch.table())
        writer.add_key_value_metadata(
            {
                "iochar.root": top,
                "iochar.taken_at": taken_at.isoformat() + "Z",
                "iochar.errors": str(errors),
            }
        )
    except BaseException:
        writer.close()
        os.unlink(tmp)
        raise
    writer.close()
    os.replace(tmp, out)
    return total


def _paths(paths: list[str]) -> pa.Array:
    try:
        return pa.array(paths, pa.string())
    except UnicodeEncodeError:  # undecodable bytes in a name (surrogate escapes)
        return pa.array(
            [
                p.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                for p in paths
            ],
            pa.string(),
        )
