"""DXT trace segments: the DXT_POSIX and DXT_MPIIO regions, decoded in Python.

:class:`_DxtWalker` checks the record heads during the validation pass (and
may keep the decompressed bytes); :class:`_DxtDecoder` turns them into the
``ops`` rows and the ``DXT_WRITE_COUNT``/``DXT_READ_COUNT`` counters;
:func:`_read_dxt` is the module reader. See *DXT* in :mod:`iochar.load.darshan`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from iochar.load.darshan._header import _inflate, _Region, _region_chunks, _region_error
from iochar.load.darshan._records import _OP_DICT, _const_str, _Log, _long_table

#: The DXT modules (decoded here; libdarshan-util never reads them).
_DXT = ("DXT_POSIX", "DXT_MPIIO")

#: One DXT segment (``struct segment_info``) and the DXT record head.
SEGMENT_DTYPE = np.dtype(
    [("offset", "=i8"), ("length", "=i8"), ("start_time", "=f8"), ("end_time", "=f8")]
)
_DXT_HEAD = 104  # sizeof(struct dxt_file_record)
_SEG = SEGMENT_DTYPE.itemsize  # sizeof(struct segment_info)
_DXT_MAX_SEGMENT_BYTES = (1 << 31) - 1  # darshan_log_get_mod takes an int length
#: Newest DXT module versions (``DXT_POSIX_VER``, ``DXT_MPIIO_VER`` in
#: Darshan 3.5) whose record layout :class:`_DxtDecoder` knows.
_DXT_VERSIONS = {"DXT_POSIX": 1, "DXT_MPIIO": 2}


def _check_counts(record: int, wc: int, rc: int) -> None:
    """Raise ValueError naming the DXT record unless its segment counts are sane."""
    if wc < 0 or rc < 0 or (wc + rc) * _SEG > _DXT_MAX_SEGMENT_BYTES:
        raise ValueError(
            f"DXT record {record}: write_count {wc} and read_count "
            f"{rc} are not valid segment counts"
        )


class _DxtWalker:
    """Checks DXT record heads and segment counts; collects host names.

    With ``keep`` > 0 it also holds on to the decompressed pieces it is fed,
    as long as they add up to at most ``keep`` bytes (``kept`` is None past
    that), so that :class:`_DxtDecoder` can decode them without
    decompressing the region again.
    """

    def __init__(self, order: str, keep: int = 0) -> None:
        self.head = struct.Struct(order + "24x64sqq")  # skip id, rank, shared_record
        self.pend = b""
        self.skip = 0
        self.records = 0
        self.segments = 0
        self._hosts: set[bytes] = set()
        self.keep = keep
        self.kept: list[bytes] | None = [] if keep > 0 else None
        self.kept_bytes = 0

    @property
    def hosts(self) -> set[str]:
        return {h.split(b"\x00", 1)[0].decode("utf-8", "replace") for h in self._hosts}

    def feed(self, data: bytes) -> None:
        if self.kept is not None:
            self.kept_bytes += len(data)
            if self.kept_bytes <= self.keep:
                self.kept.append(data)
            else:
                self.kept = None
        if self.skip:
            take = min(self.skip, len(data))
            self.skip -= take
            if take == len(data):
                return
            data = data[take:]
        buf = self.pend + data if self.pend else data
        pos, n = 0, len(buf)
        unpack, hosts = self.head.unpack_from, self._hosts
        records = segments = 0
        while n - pos >= _DXT_HEAD:
            host, wc, rc = unpack(buf, pos)
            if wc < 0 or rc < 0 or (wc + rc) * _SEG > _DXT_MAX_SEGMENT_BYTES:
                _check_counts(self.records + records, wc, rc)  # raises
            hosts.add(host)
            records += 1
            segments += wc + rc
            pos += _DXT_HEAD + (wc + rc) * _SEG
        self.records += records
        self.segments += segments
        if pos > n:
            self.skip, self.pend = pos - n, b""
        else:
            self.pend = buf[pos:]

    def close(self) -> None:
        if self.skip or self.pend:
            raise ValueError(
                f"DXT record {self.records - 1 if self.skip else self.records} is cut short "
                f"({self.skip or len(self.pend)} bytes missing or left over)"
            )


def _op_column(writes: np.ndarray, reads: np.ndarray, n: int) -> pa.Array:
    """The ``op`` column of runs of ``writes[i]`` writes then ``reads[i]`` reads.

    Built from raw buffers, which is faster than casting a dictionary array.
    """
    counts = np.column_stack([writes, reads]).ravel()
    if 5 * n >= 1 << 31:  # past int32 string offsets: leave it to Arrow's cast
        op = np.repeat(np.tile(np.array([0, 1], np.int8), len(writes)), counts)
        return pa.DictionaryArray.from_arrays(pa.array(op), _OP_DICT).cast(pa.string())
    lens = np.repeat(np.tile(np.array([5, 4], np.int32), len(writes)), counts)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lens, out=offsets[1:])
    data = b"".join(
        [b"write" * w + b"read" * r for w, r in zip(writes.tolist(), reads.tolist(), strict=True)]
    )
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


class _DxtDecoder:
    """Decodes a DXT region's decompressed bytes into contract tables.

    Fed the region piece by piece (pieces may split a record head or a
    segment anywhere), it checks every record as :class:`_DxtWalker` does
    and queues in ``out`` tables of about ``chunk_rows`` rows: the
    ``module_counters`` rows of the record heads (``DXT_WRITE_COUNT``,
    ``DXT_READ_COUNT``) and one ``ops`` row per segment, writes then reads.
    Segments are copied a run at a time and turned into columns with
    ``np.frombuffer``; a record with more segments than fit in a chunk is
    split across chunks. Works like libdarshan-util's ``dxt_log_get_*_file``:
    fields in the log's byte order, and DXT_MPIIO version 1 offsets (not
    recorded by that version) are -1.
    """

    _COUNTERS = ["DXT_WRITE_COUNT", "DXT_READ_COUNT"]

    def __init__(self, log: _Log, module: str, order: str, version: int) -> None:
        self.log, self.module = log, module
        self.rows = log.chunk_rows
        self.head = struct.Struct(order + "Qq8x64xqq")  # id, rank, [shared, host], counts
        self.seg_dtype = SEGMENT_DTYPE.newbyteorder(order)
        self.native = self.seg_dtype == SEGMENT_DTYPE
        self.no_offsets = module == "DXT_MPIIO" and version == 1
        self.pend = bytearray()  # an incomplete head (or segment) at a piece's end
        self.left = 0  # segments of the current record still to come
        self.done = 0  # segments of the current record already taken
        self.cur = (0, 0, 0)  # rank, file_id, write_count of the current record
        self.records = 0
        self.out: list[dict[str, pa.Table]] = []
        self._reset()

    def _reset(self) -> None:
        self.raw = bytearray()  # segment bytes of this chunk
        self.heads: list[int] = []  # ordinal, file_id, rank, write_count, read_count
        self.runs: list[int] = []  # rank, file_id, writes, reads of a run of segments
        self.used = 0  # rows of this chunk (2 per head, 1 per segment)

    def feed(self, data: bytes) -> None:
        mv = memoryview(data)
        n, pos = len(data), 0
        if self.pend:  # complete the unit the previous piece ended inside
            need = (_SEG if self.left else _DXT_HEAD) - len(self.pend)
            if n < need:
                self.pend += mv
                return
            self.pend += mv[:need]
            unit, self.pend = bytes(self.pend), bytearray()
            pos = need
            if self.left:
                self._segments(unit, 0, 1)
            else:
                self._head(unit, 0)
        unpack, rows = self.head.unpack_from, self.rows
        fids, file_id = self.log.file_ids, self.log.file_id
        while True:
            if self.left:
                k = min(self.left, (n - pos) // _SEG)
                if k:
                    self._segments(mv, pos, k)
                    pos += k * _SEG
                if self.left:  # the piece ends inside this record's segments
                    self.pend += mv[pos:]
                    return
            if n - pos < _DXT_HEAD:
                self.pend += mv[pos:]
                return
            rid, rank, wc, rc = unpack(mv, pos)
            nseg = wc + rc
            end = pos + _DXT_HEAD + nseg * _SEG
            if (
                wc >= 0
                and rc >= 0
                and end <= n
                and self.used + 2 + nseg <= rows
                and nseg * _SEG <= _DXT_MAX_SEGMENT_BYTES
            ):
                # the common case, done inline: the whole record is in this
                # piece and fits in this chunk
                fid = fids.get(rid)
                if fid is None:
                    fid = file_id(rid)
                self.heads += (self.records, fid, rank, wc, rc)
                if nseg:
                    self.raw += mv[pos + _DXT_HEAD : end]
                    self.runs += (rank, fid, wc, rc)
                self.used += 2 + nseg
                self.records += 1
                pos = end
                if self.used >= rows:
                    self.flush()
                continue
            self._head(mv, pos)  # checks the counts; the segments follow
            pos += _DXT_HEAD

    def _head(self, buf, pos: int) -> None:
        rid, rank, wc, rc = self.head.unpack_from(buf, pos)
        _check_counts(self.records, wc, rc)
        if self.used and self.used + 2 > self.rows:
            self.flush()
        fid = self.log.file_id(rid)
        self.heads += (self.records, fid, rank, wc, rc)
        self.used += 2
        self.records += 1
        self.left, self.done, self.cur = wc + rc, 0, (rank, fid, wc)

    def _segments(self, buf, pos: int, k: int) -> None:
        rank, fid, wc = self.cur
        while k:
            room = self.rows - self.used
            if room <= 0:
                self.flush()
                room = self.rows
            t = min(k, room)
            self.raw += buf[pos : pos + t * _SEG]
            w = min(max(wc - self.done, 0), t)
            self.runs += (rank, fid, w, t - w)
            self.done += t
            self.left -= t
            self.used += t
            pos += t * _SEG
            k -= t

    def flush(self) -> None:
        """Queue the tables of what has been decoded since the last flush."""
        tables: dict[str, pa.Table] = {}
        if self.heads:
            ordinal, fid, rank, wc, rc = np.array(self.heads, np.int64).reshape(-1, 5).T
            tables["module_counters"] = _long_table(
                self.module,
                np.repeat(ordinal, 2),
                np.repeat(fid, 2),
                np.repeat(rank, 2),
                None,
                self._COUNTERS,
                np.column_stack([wc, rc]).ravel().astype(np.float64),
            )
        seg = np.frombuffer(self.raw, dtype=self.seg_dtype)  # raw is replaced, not reused
        n = len(seg)
        if n:
            if not self.native:
                seg = seg.astype(SEGMENT_DTYPE)
            rank, fid, w, r = np.array(self.runs, np.int64).reshape(-1, 4).T
            per = w + r
            offset = np.full(n, -1, np.int64) if self.no_offsets else seg["offset"]
            tables["ops"] = pa.table(
                {
                    "job_id": pa.array(np.zeros(n, np.int64)),
                    "rank": pa.array(np.repeat(rank, per).astype(np.int32)),
                    "file_id": pa.array(np.repeat(fid, per)),
                    "op": _op_column(w, r, n),
                    "offset": pa.array(offset),
                    "size": pa.array(seg["length"]),
                    "t_start": pa.array(seg["start_time"]),
                    "t_end": pa.array(seg["end_time"]),
                    "call": _const_str(self.module, n),
                }
            )
        if tables:
            self.out.append(tables)
        self._reset()

    def close(self) -> None:
        if self.left or self.pend:
            missing = self.left * _SEG - len(self.pend) if self.left else len(self.pend)
            raise ValueError(
                f"DXT record {self.records - 1 if self.left else self.records} is cut short "
                f"({missing} bytes missing or left over)"
            )
        self.flush()


def _read_dxt(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    """DXT segments -> ops, decoded in Python from the region's decompressed bytes.

    libdarshan-util never reads a DXT region: the pieces the validation pass
    kept are decoded (the region is decompressed again only when it was too
    large to keep), and the record count lands in ``log.counts[module]``.
    """
    m, hdr = log.modules[module], log.hdr
    reg: _Region = m["region"]
    dec = _DxtDecoder(log, module, hdr.order, m["ver"])
    kept = m.pop("dxt_pieces", None)
    pieces = _drain(kept) if kept is not None else _inflate(_region_chunks(log.fh, reg), hdr.comp)
    while True:
        try:
            piece = next(pieces, None)
            if piece is None:
                dec.close()
            else:
                dec.feed(piece)
        except (zlib.error, OSError, EOFError, ValueError) as exc:
            raise _region_error(log.name, hdr, reg, exc) from exc
        out, dec.out = dec.out, []
        yield from out
        if piece is None:
            break
    log.counts[module] = dec.records


def _drain(pieces: list[bytes]) -> Iterator[bytes]:
    """Yield and drop the pieces of a list, so each is freed once decoded."""
    pieces.reverse()
    while pieces:
        yield pieces.pop()
