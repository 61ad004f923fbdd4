"""The strace loader's parse: lines -> call records -> ``ops``, ``files`` and ``jobs``.

:class:`_Parser` is one parse of one trace. :meth:`_Parser.run` cuts the input
into blocks of whole lines (:class:`~iochar.load.strace._block._Block`) and
each block into batches of at most ``chunk_rows`` lines. :meth:`_Parser._scan`
takes a batch through the stages that depend on nothing outside it (pid and
time prefixes, line kinds and syscall names, results, bad lines, the first fd,
argument spans) and may run on any thread; :meth:`_Parser._batch` then takes
the scanned batches in input order through the stages that depend on earlier
lines (midnight wrap, unprefixed pids, time order, unfinished/resumed pairs)
to call records, and :meth:`_Parser._records` turns those into contract rows
(arguments, file ids, per-fd file positions). What is carried between batches
lives on the parser and is touched only by the ordered stages, so neither
chunking nor threads show.
"""

from __future__ import annotations

import codecs
import functools
import posixpath
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np
import polars as pl
import pyarrow as pa

from iochar.errors import InputError
from iochar.load._base import Parsed, SkipLog
from iochar.load._blocks import has_high
from iochar.load._kinds import STRACE_LINE, STRACE_MSG
from iochar.load._text import iter_line_blocks
from iochar.load.strace._block import (
    _C30,
    _POW10,
    _U64,
    _Block,
    _conv8,
    _last,
    _low_mask,
    _lut,
    _nondigit,
    _nonhex,
    _word,
)
from iochar.load.strace._read import padded_blocks
from iochar.load.strace._steal import Scans
from iochar.load.strace._syscalls import (
    _ARG_CALLS,
    _AT_PATH,
    _AT_PATHS2,
    _CLOBBER_CALLS,
    _DUP_CALLS,
    _EXEC_CALLS,
    _F_ARGS,
    _F_CLOBBER,
    _F_CLOSE,
    _F_DUP,
    _F_EXEC,
    _F_FCNTL,
    _F_OPEN,
    _F_TWO,
    _FD_FIRST,
    _MMAP,
    _NO_FILE_CALLS,
    _OPEN_CALLS,
    _PATH_FIRST,
    _PATHS2,
    _POS_ADVANCE,
    _POS_EXPLICIT,
    _POS_EXPLICIT2,
    _POS_LLSEEK,
    _POS_NONE,
    _POS_PTR,
    _POS_SEEK,
    _POSITION,
    _SHAPES,
    _TWO_SIDED,
    _XFER_PTR2,
    _XFER_SENDFILE,
    _XFER_TEE,
    CALL_OPS,
    TRANSFER_OPS,
)
from iochar.schema import OPS

KIND = "strace"

# Line kinds.
_BAD, _MSG, _CALL, _UNF, _RES, _SIG, _EXIT = range(7)

_HEAD_BYTES = 64 * 1024  # the format is read from the input's first 64 KiB
_DAY_NS = 86_400 * 1_000_000_000
_HALF_DAY_NS = _DAY_NS // 2
_OP_CODE = {op: i for i, op in enumerate(OPS)}
_OTHER = _OP_CODE["other"]

# ---------------------------------------------------------------- Python regexes
# (sniffing, format detection and messages: a few lines each)
_PY_LINE = STRACE_LINE
_PY_DUR = re.compile(r"\) *= .* <\d+\.\d+>$")
_PY_FDPATH = re.compile(r"(?:\d|AT_FDCWD)<")
#: Calls whose result is the caller's pid: an unprefixed trace's one process.
_TID_CALLS = frozenset({"set_tid_address", "getpid", "gettid"})
_PY_RESULT_INT = re.compile(r".*\) += (\d+)")
_PY_CWD = re.compile(r"AT_FDCWD<((?:[^<>\n]|<[^<>\n]*>)*)>")
_PY_MIDLINE_MSG = re.compile(r"strace: Process \d+ (?:attached|detached|suspended)\n$")
_PY_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')

# ---------------------------------------------------------------- polars regexes
# On argument text of the few calls that need more than their first fd.
# (?-u) keeps classes ASCII (fast); (?u:...) marks the ones that may see anything.
_P_ANN = r"(?:->|(?u:[^<>\n])|<(?u:[^<>\n])*>)*"
_P_PATHARG = (
    r"(?-u)^(?:(?P<dirfd>AT_FDCWD|-?[0-9]+)(?:<(?P<dann>" + _P_ANN + r")>)?, )?"
    r'(?:"(?P<sp>(?:(?u:[^"\\])|\\(?u:.))*)"|NULL)'
)
_P_ANYFD = r"(?-u)(?:^|[ (\[{=,])-?[0-9]+<(" + _P_ANN + r")>"
_P_MMAPFD = r"(?-u)^(?u:[^,])*, (?u:[^,])*, (?u:[^,])*, (?u:[^,])*, ([0-9]+)"
_P_OFF = r"(?-u), (-?[0-9]+)$"
_P_OFF2 = r"(?-u), (-?[0-9]+), [A-Z0-9_|]+$"
_P_LLSEEK = r"(?-u)\[([0-9]+)\]"
# Two-sided calls (see _syscalls._TWO_SIDED): the second fd with its -y path and
# the offset pointers of a transfer (p: the pointer as printed, o: the loff_t it
# holds before the call; sendfile's "[N] => [M]" is before => after, strace's
# sendfile decoder); the first path argument a rename/link's second row drops.
_P_FDANN = r"-?[0-9]+(?:<" + _P_ANN + r">)?"
_P_FD2 = r"(?P<fd2>-?[0-9]+)(?:<(?P<ann2>" + _P_ANN + r")>)?"


def _p_ptr(g: str) -> str:
    return rf"(?P<p{g}>NULL|\[(?P<o{g}>-?[0-9]+)\](?: => \[-?[0-9]+\])?|(?u:[^,])+)"


_P_NOPTR = {g: rf"(?P<p{g}>)(?P<o{g}>)" for g in "12"}
_P_XFER = {
    _XFER_PTR2: rf"(?-u)^{_P_FDANN}, {_p_ptr('1')}, {_P_FD2}, {_p_ptr('2')},",
    _XFER_SENDFILE: rf"(?-u)^{_P_FDANN}, {_P_NOPTR['1']}{_P_FD2}, {_p_ptr('2')},",
    _XFER_TEE: rf"(?-u)^{_P_FDANN}, {_P_NOPTR['1']}{_P_FD2}, {_P_NOPTR['2']}",
}
#: ops.op code of a transfer's (first, second) fd argument's row, by layout.
_XFER_OP = np.full((max(_P_XFER) + 1, 2), -1, dtype=np.int8)
for _name, (_a, _b) in TRANSFER_OPS.items():
    _XFER_OP[_TWO_SIDED[_name]] = (_OP_CODE[_a], _OP_CODE[_b])
_P_QSTR = r'"(?:(?u:[^"\\])|\\(?u:.))*"(?:\.\.\.)?'
_P_FIRST_PATH = {
    _PATHS2: rf"(?-u)^{_P_QSTR}, ",
    _AT_PATHS2: rf"(?-u)^(?:AT_FDCWD|-?[0-9]+)(?:<{_P_ANN}>)?, {_P_QSTR}, ",
}

_EXPECT_LINE = "an strace line: [pid] timestamp syscall(args) = result"
_EXPECT_TIMED = (
    "a timestamp before the call (this trace has none: record with -tt or -ttt, e.g. "
    "strace -f -tt -T -y -o FILE PROGRAM; -t and -r are read too)"
)
#: A call line with no timestamp (strace without -t/-tt/-ttt/-r).
_PY_UNTIMED = re.compile(r"^(?:\[pid +\d+\] |\d+ +)?[a-z_][\w?]*\(.*\) += ")
_EXPECT_TAIL = "'= result' or '<unfinished ...>' at the end of the call"
_EXPECT_TRUNC = "a complete line (the input looks truncated)"

_FOLLOW = _lut(b",) ]}(\n\x00")  # what may follow the '>' closing an fd path
_NAME_RE = re.compile(r"^[A-Za-z0-9_?]+$")

_W_RES, _W_SIG, _W_EXIT = _word(b"<... "), _word(b"--- "), _word(b"+++ ")
_W_SIGEND, _W_EXITEND = _word(b" ---"), _word(b" +++")
_W_DET1, _W_DET2 = _word(b"<detache"), _word(b"d ...>")
_W_UNF1, _W_UNF2 = _word(b"<unfinis"), _word(b"hed ...>")
_W_UNAV1, _W_UNAV2 = _word(b" <unav"), _word(b"ailable>")
_W_RESUMED, _W_PID = _word(b" resumed"), _word(b"[pid ")
_W_DELETED = _word(b"(deleted")
_W_MSG, _W_PROC1, _W_PROC2 = _word(b"strace: "), _word(b"[ Proces"), _word(b"s PID=")


def _as_bytes(data: np.ndarray | bytes, n: int) -> bytes:
    """A block's ``n`` bytes as ``bytes`` (a block read by ``padded_blocks`` is a buffer)."""
    return data if isinstance(data, bytes) else data[:n].tobytes()


def _src(r: dict[str, Any], rows: np.ndarray) -> np.ndarray:
    """The records ``rows`` as rows of the batch's result strings (``err``, ``rpath``).

    :meth:`_Parser._two_sided` inserts second records without copying those
    strings; ``r["src"]`` then maps each record to its call's row.
    """
    src = r.get("src")
    return rows if src is None else src[rows]


def _nullable(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """An Arrow array of the numbers ``values`` (no copy), NULL where not ``valid``.

    Built from buffers: ``pa.array`` on numpy input imports pandas (about
    0.3 s, once per process), which the parse has no use for.
    """
    values = np.ascontiguousarray(values)
    validity = None
    if valid is not None and not valid.all():
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(values.dtype), values.size, [validity, pa.py_buffer(values)]
    )


def _strings(values: list[str | None]) -> pa.Array:
    """An Arrow string array of ``values`` (through polars; see :func:`_nullable`)."""
    return pl.Series(values, dtype=pl.String).to_arrow().cast(pa.string())


def _unescape(text: str) -> str:
    """Undo strace's C-style string escapes (``\\x41``, ``\\101``, ``\\n``...)."""
    if "\\" not in text:
        return text
    try:
        raw = codecs.escape_decode(text.encode("latin-1", "backslashreplace"))[0]
    except (ValueError, UnicodeError):
        return text
    return raw.decode("utf-8", "backslashreplace")


def _norm_path(kind: str, raw: str, base: str | None) -> str:
    """A file's name from an fd annotation (kind "a") or a path argument ("s")."""
    if kind == "a":
        # -yy appends <char 1:3> / <block 8:1> to device paths
        if raw.endswith(">") and "<" in raw:
            raw = raw[: raw.rindex("<")]
        path = _unescape(raw)
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
    else:
        path = _unescape(raw)
        if not path.startswith("/") and base:
            path = _unescape(base).rstrip("/") + "/" + path
    if path.startswith("/"):
        path = posixpath.normpath(path)
    return path


def _split_exe(args: str) -> tuple[str | None, str | None]:
    """(program path, argv joined by spaces) from execve's printed arguments."""
    strings = _PY_STR.finditer(args)
    first = next(strings, None)
    if first is None:
        return None, None
    prog = _unescape(first.group(1))
    rest = args[first.end() :]
    lo = rest.find("[")
    if lo < 0:
        return prog, None
    hi = rest.find("]", lo)
    inside = rest[lo + 1 : hi if hi >= 0 else len(rest)]
    parts = []
    for m in _PY_STR.finditer(inside):
        part = _unescape(m.group(1))
        if inside[m.end() : m.end() + 3] == "...":
            part += "..."
        parts.append(part)
    if inside.rstrip().endswith(", ..."):
        parts.append("...")
    return prog, " ".join(parts) if parts else None


#: An ``-ttt`` time below this [s since 1970, i.e. 1973-03-03] is taken for ``-r``'s
#: seconds since the previous line.
_EPOCH_MIN_S = 100_000_000


def _detect(text: str) -> dict[str, Any] | None:
    """Format facts from the first lines of a trace, or None if none parse."""
    fmt: dict[str, Any] | None = None
    durations = fd_paths = False
    leader = cwd = None
    for n, line in enumerate(text.split("\n")[:2000]):
        if not line or line.startswith(STRACE_MSG):
            continue
        m = _PY_LINE.match(line)
        if m is None:
            continue
        if fmt is None:
            if m.group("bpid"):
                prefix = "bracket"
            elif m.group("pid"):
                prefix = "bare"
            else:
                prefix = "none"
            if m.group("hh") is not None:
                clock = "-tt" if m.group("hfrac") else "-t"
            elif int(m.group("es")) < _EPOCH_MIN_S:
                # seconds since the previous line (strace -r), right-aligned: no clock
                # set to before 1973 writes an epoch time this small
                clock = "-r"
            else:
                clock = "-ttt"
            fmt = {"prefix": prefix, "clock": clock, "first_line": n}
        durations = durations or bool(_PY_DUR.search(line))
        fd_paths = fd_paths or bool(_PY_FDPATH.search(line))
        if cwd is None and "AT_FDCWD<" in line:
            c = _PY_CWD.search(line)
            cwd = c.group(1) if c else None
        if (
            leader is None
            and fmt["prefix"] != "bare"
            and m.group("bpid") is None
            and m.group("name") in _TID_CALLS
        ):  # the line read with the timestamp grammar above (-t, -tt, -ttt, -r)
            t = _PY_RESULT_INT.match(line)
            if t:
                leader = int(t.group(1))
    if fmt is not None:
        fmt.update(durations=durations, fd_paths=fd_paths, leader=leader, cwd=cwd)
    return fmt


@functools.lru_cache(maxsize=4096)
def _name_attrs(name: str) -> tuple[int, int, int, int, int]:
    """What a syscall name means here: (op code or -1, shape, position rule, flags, layout).

    A pure function of the name (:mod:`~iochar.load.strace._syscalls`), so
    block scans running in parallel can use it before the name has its
    global id.
    """
    op = CALL_OPS.get(name)
    flags = (
        (_F_OPEN if name in _OPEN_CALLS else 0)
        | (_F_DUP if name in _DUP_CALLS else 0)
        | (_F_FCNTL if name in ("fcntl", "fcntl64") else 0)
        | (_F_CLOSE if name == "close" else 0)
        | (_F_CLOBBER if name in _CLOBBER_CALLS else 0)
        | (
            _F_ARGS
            if name in _ARG_CALLS or (name not in _SHAPES and name not in _NO_FILE_CALLS)
            else 0
        )
        | (_F_EXEC if name in _EXEC_CALLS else 0)
        | (_F_TWO if name in _TWO_SIDED else 0)
    )
    return (
        -1 if op is None else _OP_CODE[op],
        _SHAPES.get(name, 0),
        _POSITION.get(name, _POS_NONE),
        flags,
        _TWO_SIDED.get(name, 0),
    )


def _local_names(
    blk: _Block, kind: np.ndarray, start: np.ndarray, length: np.ndarray
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """Number the syscall names of a batch's call lines in order of first appearance.

    Returns (each line's local name code, -1 for none; the names; each code's
    shape and flags, with a last entry 0 that code -1 reads). Lines whose name
    is not a syscall name become bad lines. :meth:`_Parser._batch` maps the
    codes to global ids in the same order, so ids never depend on the blocks.
    """
    loc = np.full(kind.size, -1, dtype=np.int32)
    ci = np.flatnonzero((kind == _CALL) | (kind == _UNF) | (kind == _RES))
    if ci.size == 0:
        return loc, [], np.zeros(1, dtype=np.int8), np.zeros(1, dtype=np.int16)
    st, ln = start[ci], length[ci]
    h = ln.astype(np.uint64) * _U64(0x9E3779B97F4A7C15)
    for k in range(0, min(int(ln.max()), 64), 8):
        w = blk.load(st + k) & _low_mask(ln - k)
        h = (h ^ w) * _U64(0x100000001B3)
    # number the hashes in order of first appearance (a hash table, in polars)
    hs = pl.Series(h)
    first = np.sort(hs.arg_unique().to_numpy())
    codes = hs.replace_strict(
        hs.gather(first), pl.int_range(0, first.size, eager=True), return_dtype=pl.Int32
    ).to_numpy()
    names = [blk.text(st[i], st[i] + ln[i]) for i in first]
    valid = np.array([_NAME_RE.match(nm) is not None for nm in names] + [False])
    none = (-1, 0, 0, 0, 0)
    attrs = [_name_attrs(nm) if v else none for nm, v in zip(names, valid[:-1], strict=True)]
    shape = np.array([a[1] for a in attrs] + [0], dtype=np.int8)
    flags = np.array([a[3] for a in attrs] + [0], dtype=np.int16)
    codes = codes.astype(np.int32)  # writable
    codes[~valid[codes]] = -1
    loc[ci] = codes
    kind[ci[codes < 0]] = _BAD
    return loc, names, shape, flags


# ---------------------------------------------------------------- line stages
# Pure functions of a block's lines, used by _Parser._batch in this order.


def _bare_pids(blk: _Block, ls: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Read ``1234  `` pid prefixes (``-f -o``): (pid, where the timestamp starts).

    Clears ``ok`` of lines without a well-formed prefix.
    """
    pid, plen = blk.uint(ls)
    nsp = blk.skip(ls + plen, 32, limit=16)
    ok &= (plen > 0) & (plen < 12) & (nsp > 0) & (nsp < 16)
    return pid, ls + plen + nsp


def _bracket_pids(blk: _Block, ls: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Read ``[pid  1234] `` prefixes (stderr captures): (pid or -1, where the timestamp starts).

    Clears ``ok`` of lines whose ``[pid`` prefix is malformed.
    """
    buf = blk.buf
    pid = np.full(ls.size, -1, dtype=np.int64)
    ts0 = ls.copy()
    br = np.flatnonzero(blk.match(ls, _W_PID))
    if br.size:
        p0 = ls[br] + 5
        p0 = p0 + blk.skip(p0, 32, limit=16)
        v, vl = blk.uint(p0)
        close = p0 + vl
        good = (vl > 0) & (vl < 12) & (buf[close] == 93) & (buf[close + 1] == 32)
        pid[br] = np.where(good, v, -1)
        ok[br] &= good
        ts0[br] = close + 2
    return pid, ts0


def _timestamps(
    blk: _Block, ts0: np.ndarray, ok: np.ndarray, epoch: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Read the timestamps at ``ts0``: (time [ns], where the call text starts).

    ``epoch``: ``-ttt`` seconds since 1970; otherwise ``-t``/``-tt`` time of
    day. Clears ``ok`` of lines without a well-formed timestamp.
    """
    buf = blk.buf
    if epoch:
        sec, sl = blk.uint(ts0)
        ok &= (sl > 0) & (sl <= 10)
        dot = ts0 + sl
    else:  # HH:MM:SS
        w = blk.load(ts0)
        ok &= (_nondigit(w) & _U64(0x8080008080008080)) == 0
        ok &= (w & _U64(0x0000FF0000FF0000)) == _U64(0x00003A00003A0000)
        d = [((w >> _U64(8 * k)) & _U64(0x0F)).astype(np.int64) for k in (0, 1, 3, 4, 6, 7)]
        sec = (d[0] * 10 + d[1]) * 3600 + (d[2] * 10 + d[3]) * 60 + d[4] * 10 + d[5]
        dot = ts0 + 8
    has_frac = buf[dot] == 46
    fv, fl = blk.uint(dot + 1)
    fgood = (fl > 0) & (fl <= 9)
    ok &= ~has_frac | fgood
    frac = np.where(has_frac & fgood, fv * _POW10[np.clip(9 - fl, 0, 18)], 0)
    tend = np.where(has_frac, dot + 1 + fl, dot)
    ok &= buf[tend] == 32
    return sec * 1_000_000_000 + frac, tend + 1


def _skip_relative(blk: _Block, body: np.ndarray, ok: np.ndarray) -> None:
    """Step ``body`` over ``(+ SECONDS) `` where ``-r`` was given with ``-t``/``-tt``/``-ttt``
    (the time since the previous line, after the absolute time read): in place.

    Clears ``ok`` of lines where it is malformed.
    """
    buf = blk.buf
    rel = np.flatnonzero((buf[body] == 40) & (buf[body + 1] == 43))  # '(+'
    if rel.size == 0:
        return
    p = body[rel] + 2
    p = p + blk.skip(p, 32, limit=16)
    _, n = blk.uint(p)
    good = n > 0
    p = p + n
    dot = buf[p] == 46
    _, fl = blk.uint(p + 1)
    good &= ~dot | (fl > 0)
    p = np.where(dot, p + 1 + fl, p)
    good &= (buf[p] == 41) & (buf[p + 1] == 32)  # ') '
    ok[rel] &= good
    body[rel] = p + 2


def _line_kinds(
    blk: _Block, ok: np.ndarray, b: np.ndarray, le: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Classify lines (call, unfinished, resumed, signal, exit or bad) from the text at ``b``.

    Returns (kind, start and length of the syscall name, the line's last 8 and
    last 16 bytes as uint64 loads).
    """
    n = b.size
    buf = blk.buf
    head = blk.load(b)
    last8 = blk.load(le - 8)  # the line's last 8 and 16 bytes
    last16 = blk.load(le - 16)
    end8 = last8 >> _U64(32)
    res = (head & _W_RES[1]) == _W_RES[0]
    sig = ((head & _W_SIG[1]) == _W_SIG[0]) & (end8 == _W_SIGEND[0])
    ext = ((head & _W_EXIT[1]) == _W_EXIT[0]) & (end8 == _W_EXITEND[0])
    det = np.flatnonzero((head & _W_DET1[1]) == _W_DET1[0])
    if det.size:
        ext[det] = blk.match(b[det] + 8, _W_DET2)
    nm0 = np.where(res, b + 5, b)
    nlen = np.zeros(n, dtype=np.int64)
    ci = np.flatnonzero(ok & ~res & ~sig & ~ext)
    nlen[ci] = blk.find(b[ci], 40, limit=64)  # '('
    ri = np.flatnonzero(ok & res)
    if ri.size:
        nlen[ri] = blk.find(nm0[ri], 32, limit=64)  # ' '
        rafter = nm0[ri] + nlen[ri]
        res[ri] = (nlen[ri] > 0) & blk.match(rafter, _W_RESUMED) & (buf[rafter + 8] == 62)
    call = ~res & (nlen > 0)
    unf = call & (last16 == _W_UNF1[0]) & (last8 == _W_UNF2[0])
    kind = np.full(n, _BAD, dtype=np.int8)
    kind[ok & call] = _CALL
    kind[ok & unf] = _UNF
    kind[ok & res] = _RES
    kind[ok & sig] = _SIG
    kind[ok & ext] = _EXIT
    return kind, nm0, nlen, last8, last16


def _durations(
    wf: np.ndarray, wi: np.ndarray, lt: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode the ``-T`` duration ending each line (' <S.UUUUUU>' or ' <unavailable>').

    ``wf``/``wi``: the line's last 8 and 16 bytes; ``lt``: its end. Returns
    (duration [s], NaN when none; where the result before it ends; whether
    the line ends in a duration or ``<unavailable>``).
    """
    cand = ((wf & _U64(0xFF000000000000FF)) == _U64(0x3E0000000000002E)) & (
        (_nondigit(wf) & _U64(0x00FFFFFFFFFFFF00)) == 0
    )
    h = _last(_nondigit(wi))  # the byte before the seconds' digits
    nsec = 7 - h
    hb = (8 * np.maximum(h, 0)).astype(np.uint64)
    lt_ch = (wi >> hb) & _U64(0xFF)
    sp_ch = (wi >> np.maximum(hb, _U64(8)) - _U64(8)) & _U64(0xFF)
    has_dur = cand & (h >= 1) & (nsec >= 1) & (lt_ch == 60) & (sp_ch == 32)
    keep_hi = ~_low_mask(h + 1)
    # mask before subtracting '0', so no borrow crosses into the digits
    secs = _conv8((wi & keep_hi) - (_C30 & keep_hi))
    mid = _U64(0x00FFFFFFFFFFFF00)
    usec = _conv8(((wf & mid) - (_C30 & mid)) << _U64(8))
    dur = np.where(has_dur, secs + usec / 1e6, np.nan)
    tail_end = np.where(has_dur, lt - 10 - nsec, lt)
    unav = (wi >> _U64(16)) == _W_UNAV1[0]
    unav &= wf == _W_UNAV2[0]
    tail_end = np.where(unav, lt - 14, tail_end)
    return dur, tail_end, has_dur | unav


def _return_values(blk: _Block, r0: np.ndarray) -> tuple[np.ndarray, ...]:
    """Read the return values at ``r0`` (decimal, negative, ``0x`` hex or ``?``).

    Returns (decimal value, whether it is a decimal value, where it ends,
    whether it is ``?``, whether it is well formed).
    """
    rw = blk.load(r0)
    c0 = rw & _U64(0xFF)
    q = c0 == 63
    neg = c0 == 45
    hexr = (rw & _U64(0xFFFF)) == _U64(0x7830)
    dv, dl = blk.uint(r0 + neg)
    hl = np.zeros(r0.size, dtype=np.int64)
    hi = np.flatnonzero(hexr)
    if hi.size:
        hl[hi] = blk.span(r0[hi] + 2, _nonhex, limit=24)
    ret_end = r0 + np.where(q, 1, np.where(hexr, 2 + hl, neg + dl))
    ret = np.where(neg, -dv, dv)
    retok = ~q & ~hexr & (dl > 0) & (dl < 16)
    valid = q | (hexr & (hl > 0)) | ((dl > 0) & (dl < 16))
    return ret, retok, ret_end, q, valid


def _errors_and_paths(
    blk: _Block,
    res: dict[str, np.ndarray],
    ti: np.ndarray,
    good: np.ndarray,
    ret_end: np.ndarray,
    tail_end: np.ndarray,
    c: np.ndarray,
    lastc: np.ndarray,
) -> None:
    """Locate the errno name after a failed result and the ``-y`` path of a returned fd.

    ``c``: the byte after each return value; ``lastc``: the result's last byte.
    """
    buf = blk.buf
    ei = np.flatnonzero(good & (c == 32) & (buf[ret_end + 1] == 69))
    if ei.size:
        res["has_err"][ti[ei]] = True
        res["err_st"][ti[ei]] = ret_end[ei] + 1
        res["err_len"][ti[ei]] = blk.find(ret_end[ei] + 1, 32, limit=48).clip(0)
    # strace 6 prints a deleted file's fd as <path>(deleted)
    deleted = (lastc == 41) & blk.match(tail_end - 9, _W_DELETED)
    deleted &= buf[tail_end - 10] == 62
    pi = np.flatnonzero(good & (c == 60) & ((lastc == 62) | deleted))
    if pi.size:
        rp_st = ret_end[pi] + 1
        res["has_rp"][ti[pi]] = True
        res["rp_st"][ti[pi]] = rp_st
        res["rp_len"][ti[pi]] = tail_end[pi] - np.where(deleted[pi], 10, 1) - rp_st


def _fd_path_end(blk: _Block, st: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Find the '>' closing each ``-y`` fd path that starts at ``st``: (position, found)."""
    buf = blk.buf
    off = blk.find(st, 62, limit=4096)  # the closing '>'
    found = off >= 0
    close = st + np.maximum(off, 0)
    for _ in range(4):  # '>' inside: -yy "<char 1:3>>", sockets "1.2:3->4.5:6"
        inner = np.flatnonzero(found & ~_FOLLOW[buf[close + 1]])
        if inner.size == 0:
            break
        nxt = blk.find(close[inner] + 1, 62, limit=4096)
        close[inner] = np.where(nxt >= 0, close[inner] + 1 + nxt, close[inner])
        found[inner[nxt < 0]] = False
    return close, found


def _result_fields(blk: _Block, res: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, Any]:
    """Gather the result fields of the lines ``rows`` (the lines that end a call)."""
    has_err, has_rp = res["has_err"][rows], res["has_rp"][rows]
    return {
        "ret": res["ret"][rows],
        "retok": res["retok"][rows],
        "has_err": has_err,
        "err": blk.strings(res["err_st"][rows], res["err_len"][rows], has_err),
        "rpath": blk.strings(res["rp_st"][rows], res["rp_len"][rows], has_rp),
        "has_rpath": has_rp,
        "dur": res["dur"][rows],
    }


def _first_fd(
    blk: _Block,
    keep: np.ndarray,
    kind: np.ndarray,
    loc: np.ndarray,
    l_shape: np.ndarray,
    after: np.ndarray,
    le: np.ndarray,
) -> dict[str, np.ndarray]:
    """Read the fd that calls on an fd name first, and where its ``-y`` path lies.

    ``keep``: the call lines' rows in the batch, ``kind``/``loc`` their kinds
    and local name codes, ``l_shape`` each code's shape.
    """
    buf = blk.buf
    m = keep.size
    fd = np.zeros(m, dtype=np.int64)
    fdok = np.zeros(m, dtype=bool)
    ann_st = np.zeros(m, dtype=np.int64)
    ann_len = np.zeros(m, dtype=np.int64)
    has_ann = np.zeros(m, dtype=bool)
    fi = np.flatnonzero(((kind == _CALL) | (kind == _UNF)) & (loc >= 0))
    fi = fi[l_shape[loc[fi]] == _FD_FIRST]
    if fi.size:
        fk = keep[fi]
        a0 = after[fk] + 1
        neg = buf[a0] == 45
        fv, fl = blk.uint(a0 + neg)
        fdok[fi] = (fl > 0) & (fl < 12)
        fd[fi] = np.where(neg, -fv, fv)
        st = a0 + neg + fl + 1
        ai = np.flatnonzero(fdok[fi] & (buf[st - 1] == 60))
        if ai.size:
            st = st[ai]
            close, found = _fd_path_end(blk, st)
            has_ann[fi[ai]] = found & (close < le[fk[ai]])
            ann_st[fi[ai]] = st
            ann_len[fi[ai]] = close - st
    return {"fd": fd, "fdok": fdok, "ann_st": ann_st, "ann_len": ann_len, "has_ann": has_ann}


def _arg_spans(
    blk: _Block,
    keep: np.ndarray,
    kind: np.ndarray,
    flags: np.ndarray,
    after: np.ndarray,
    le: np.ndarray,
    aend: np.ndarray,
) -> dict[str, np.ndarray]:
    """Locate the argument text of the calls that need more than their first fd.

    ``flags``: each kept line's name flags (0 for no name).
    """
    need = (kind == _UNF) | (kind == _RES) | ((kind == _CALL) & ((flags & _F_ARGS) != 0))
    a_st = np.where(kind == _RES, after[keep] + 9, after[keep] + 1)
    unf_end = le[keep] - 16
    unf_end = unf_end - (blk.buf[np.maximum(unf_end - 1, 0)] == 32)
    a_end = np.where(kind == _UNF, unf_end, aend[keep])
    need &= a_end >= a_st
    return {"a_st": a_st, "a_len": a_end - a_st, "need": need}


_KEPT = (
    "kind", "loc", "pid", "ts", "lineno", "fd", "fdok", "ann_st", "ann_len", "has_ann",
    "a_st", "a_len", "need", "ls", "le",
)  # fmt: skip


# ---------------------------------------------------------------- unfinished/resumed pairs


def _link_split_calls(
    kind: np.ndarray,
    pid: np.ndarray,
    lineno: np.ndarray,
    gid: np.ndarray,
    pend: dict[str, Any] | None,
) -> dict[str, np.ndarray]:
    """Line up each pid's unfinished, resumed and exit lines to see which belong together.

    The calls still unfinished from earlier batches (``pend``) come first,
    then this batch's lines, sorted by (pid, line). Returns their ``pid``,
    ``line``, ``gid``, ``kind``, ``src`` (row in the batch, ``-1 - i`` for
    ``pend`` entry ``i``), the next line's kind of the same pid (``n_kind``,
    -1 for none) and masks: ``res_ok`` (resumed, right after its unfinished
    start), ``paired`` (unfinished, resumed next), ``ended`` (unfinished, its
    process exits next), ``pending`` (unfinished, nothing after it yet).
    """
    q = 0 if pend is None else pend["pid"].size
    sidx = np.flatnonzero((kind == _UNF) | (kind == _RES) | (kind == _EXIT))
    s_pid, s_line, s_gid = pid[sidx], lineno[sidx], gid[sidx]
    s_kind, s_src = kind[sidx], sidx.astype(np.int64)
    if q:
        assert pend is not None
        s_pid = np.concatenate([pend["pid"], s_pid])
        s_line = np.concatenate([pend["lineno"], s_line])
        s_gid = np.concatenate([pend["gid"], s_gid])
        s_kind = np.concatenate([np.full(q, _UNF, dtype=np.int8), s_kind])
        s_src = np.concatenate([-1 - np.arange(q), s_src])
    order = np.lexsort((s_line, s_pid))
    s_pid, s_line, s_gid, s_kind, s_src = (x[order] for x in (s_pid, s_line, s_gid, s_kind, s_src))
    ns = s_pid.size
    same = np.zeros(ns + 1, dtype=bool)
    same[1:-1] = s_pid[1:] == s_pid[:-1]
    p_kind = np.full(ns, -1, dtype=np.int8)
    p_kind[1:] = s_kind[:-1]
    p_kind[~same[:-1]] = -1
    p_gid = np.full(ns, -2, dtype=np.int64)
    p_gid[1:] = s_gid[:-1]
    n_kind = np.full(ns, -1, dtype=np.int8)
    n_kind[:-1] = s_kind[1:]
    n_kind[~same[1:]] = -1
    n_gid = np.full(ns, -2, dtype=np.int64)
    n_gid[:-1] = s_gid[1:]
    is_unf, is_res = s_kind == _UNF, s_kind == _RES
    return {
        "pid": s_pid,
        "line": s_line,
        "gid": s_gid,
        "kind": s_kind,
        "src": s_src,
        "n_kind": n_kind,
        "res_ok": is_res & (p_kind == _UNF) & (p_gid == s_gid),
        "paired": is_unf & (n_kind == _RES) & (n_gid == s_gid),
        "ended": is_unf & (n_kind == _EXIT),
        "pending": is_unf & (n_kind == -1),
    }


# ---------------------------------------------------------------- records -> ops
# What the calls do to their fds, which files they name, where each fd stands.


def _fd_events(
    r: dict[str, Any],
    a: dict[str, Any],
    op: np.ndarray,
    shape: np.ndarray,
    poskind: np.ndarray,
    flags: np.ndarray,
    ok: np.ndarray,
) -> dict[str, np.ndarray]:
    """Say what each call does to its (pid, fd): which fd, and its file and position events.

    ``key``/``key_ok``: the fd a call acts on (the one it returns for opens,
    dups and -y sockets); ``path_ev``/``base_ev``: the call sets the fd's file
    / its position (to ``base``, known when ``base_ok``); ``adv``: bytes a
    read or write moves the position by; ``seek*``: lseek's new position. The
    caller adds ``ev_fid``/``ev_ok`` (the file an opening call gives the fd).
    """
    ret = r["ret"]
    is_open = ((flags & _F_OPEN) != 0) & ok
    is_dup = (((flags & _F_DUP) != 0) | a["dupfd"]) & ok
    is_new = is_open | is_dup | (ok & r["has_rpath"])  # socket, eventfd... with -y
    is_close = (flags & _F_CLOSE) != 0
    llseek = poskind == _POS_LLSEEK
    seek = (poskind == _POS_SEEK) | llseek
    seek_pos = np.where(llseek, a["llpos"], ret)
    seek_ok = seek & ok & (~llseek | a["llpos_ok"])
    by_fd = (shape == _FD_FIRST) & r["fdok"]
    by_mmap = (shape == _MMAP) & a["mfd_ok"]
    advancing = (poskind == _POS_ADVANCE) | (
        (poskind == _POS_EXPLICIT2) & a["off_ok"] & (a["off"] == -1)
    )
    ev_append = is_open & a["append"]
    return {
        "key": np.select(
            [is_new, by_fd, a["dirfd_ok"], by_mmap], [ret, r["fd"], a["dirfd"], a["mfd"]], 0
        ),
        "key_ok": is_new | by_fd | a["dirfd_ok"] | by_mmap,
        "is_new": is_new,
        "path_ev": is_new | is_close,
        "ev_append": ev_append,
        "base_ev": is_new | is_close | ((flags & _F_CLOBBER) != 0) | seek_ok,
        "base": np.where(seek_ok, seek_pos, 0),
        "base_ok": (is_open & ~ev_append) | seek_ok,
        "adv": np.where(advancing & ok & (ret > 0), ret, 0),
        "advancing": advancing,
        "is_write": op == _OP_CODE["write"],
        "seek": seek,
        "seek_pos": seek_pos,
        "seek_ok": seek_ok,
    }


def _file_keys(sub: pl.DataFrame) -> pl.DataFrame:
    """Key the files calls name other than by a first-fd path: ``pk`` (named), ``rk`` (returned).

    Annotation keys are the raw ``-y`` text; path-argument keys are
    ``"base\\0path"``. Returns the columns ``i``, ``ann``, ``pk`` and ``rk``.
    """
    ok, flags = pl.col("ok"), pl.col("flags")
    dirfd, dann, sp, rpath = pl.col("dirfd"), pl.col("dann"), pl.col("sp"), pl.col("rpath")
    has_sp = sp.is_not_null() & (sp != "")
    base = (
        pl.when(sp.str.starts_with("/"))
        .then(pl.lit(""))
        .when(dirfd.is_null() | (dirfd == "AT_FDCWD"))
        .then(pl.col("cwd"))
        .otherwise(dann)
        .fill_null("")
    )
    key = (
        pl.when(((flags & _F_OPEN) != 0) & ok & rpath.is_not_null())
        .then(rpath)
        .when(has_sp)
        .then(base + pl.lit("\x00") + sp)
        .when(dann.is_not_null())
        .then(dann)
        .when(pl.col("gann").is_not_null())
        .then(pl.col("gann"))
        .when(ok)
        .then(rpath)
    )
    return sub.select(
        "i",
        "ann",
        pk=pl.when(pl.col("ann").is_null()).then(key),
        rk=pl.when(ok).then(rpath),
    )


def _first_seen(
    ann: pl.Series, acode: np.ndarray, has_a: np.ndarray, sub: pl.DataFrame
) -> list[tuple[int, int | None, str]]:
    """List every file key of the batch once, in order of first appearance.

    Entries are (position, fd-path categorical code or None, key); a record's
    named file (position ``2 i``) comes before the one it returns (``2 i + 1``).
    """
    firsts = (
        pl.DataFrame({"c": acode[has_a], "pos": np.flatnonzero(has_a) * 2})
        .group_by("c")
        .agg(pl.col("pos").min())
    )
    i2 = sub["i"].cast(pl.Int64) * 2
    other = pl.concat(
        [
            pl.DataFrame({"k": sub["pk"], "pos": i2}),
            pl.DataFrame(
                {
                    "k": sub.select(
                        pl.when(pl.col("rk") != pl.coalesce("pk", "ann")).then(pl.col("rk"))
                    ).to_series(),
                    "pos": i2 + 1,
                }
            ),
        ]
    ).drop_nulls("k")
    keyed: list[tuple[int, int | None, str]] = [
        (int(p), None, k) for k, p in other.group_by("k").agg(pl.col("pos").min()).iter_rows()
    ]
    if firsts.height:
        distinct = ann.drop_nulls().unique()
        names = dict(
            zip(
                distinct.to_physical().to_list(),
                distinct.cast(pl.String).to_list(),
                strict=True,
            )
        )
        keyed += [(int(p), c, names[c]) for c, p in firsts.iter_rows()]
    keyed.sort(key=lambda e: e[0])
    return keyed


def _segment_starts(gs: np.ndarray, flag: np.ndarray, i: np.ndarray) -> np.ndarray:
    """Index of each row's segment start: fd group starts, and rows right after a flagged row."""
    start = gs.copy()
    start[1:] |= flag[:-1]
    return np.maximum.accumulate(np.where(start, i, 0))


def _prev_in_group(v: np.ndarray, empty: Any, gs: np.ndarray) -> np.ndarray:
    """The previous row's value within the same fd group (``empty`` on a group's first row)."""
    out = np.empty_like(v)
    out[0] = empty
    out[1:] = v[:-1]
    out[gs] = empty
    return out


def _fd_walk(c: dict[str, np.ndarray], gs: np.ndarray) -> dict[str, np.ndarray]:
    """Follow each (pid, fd) through its calls: its file and position before each call.

    ``c``: the calls sorted by (pid, fd), ``gs``: each fd's first row. Returns
    ``lk``/``ok``/``app`` (the fd's file id, known, opened O_APPEND), ``aw``
    (a write to an O_APPEND fd), ``reset`` (the call sets the position),
    ``pos``/``pos_ok`` (the position before the call, known).
    """
    i = np.arange(gs.size)
    # file segments: open/close/dup (and carried state) set the fd's file
    pidx = _segment_starts(gs, c["path_ev"], i)
    f_app = _prev_in_group(c["ev_append"], False, gs)[pidx]
    # position segments: open, lseek, close, dup, and writes to O_APPEND fds
    f_aw = c["advancing"] & c["is_write"] & f_app
    reset = c["base_ev"] | f_aw
    ridx = _segment_starts(gs, reset, i)
    adv = c["adv"]
    before = np.cumsum(adv) - adv
    return {
        "lk": _prev_in_group(c["ev_fid"], 0, gs)[pidx],
        "ok": _prev_in_group(c["ev_ok"], False, gs)[pidx],
        "app": f_app,
        "aw": f_aw,
        "reset": reset,
        "pos": _prev_in_group(c["base"], 0, gs)[ridx] + before - before[ridx],
        "pos_ok": _prev_in_group(c["base_ok"] & ~f_aw, False, gs)[ridx],
    }


class _Parser:
    """One parse. The state carried across blocks makes chunking invisible.

    Two passes over each block of whole lines (Sec. "Parallel blocks" of the
    package docstring): :meth:`_scan` reads every line's own fields (pid,
    time of day, kind, syscall name, result, first fd and its ``-y`` path,
    argument spans) and depends on nothing outside the block, so blocks are
    scanned on worker threads, several at once; :meth:`_batch` then takes the
    scanned blocks in input order, one at a time, through everything that
    depends on earlier lines (midnight wrap of the clock, unprefixed pids,
    time order, ``<unfinished ...>`` calls carried from earlier blocks, fd
    files and positions, working directory, file and name ids). The result is
    the same whatever the block size and the number of threads.
    """

    def __init__(
        self,
        name: str,
        strict: bool,
        chunk_rows: int,
        threads: int = 1,
        block_bytes: int | None = None,
    ) -> None:
        """Start a parse of the input ``name`` (the state carried between batches).

        ``threads``: threads in all (one reads and runs the ordered pass, the
        others scan blocks); ``block_bytes``: block size [bytes], by default
        ``chunk_rows`` * 128 within [1 MiB, 8 MiB].
        """
        self.name = name
        self.strict = strict
        self.chunk_rows = chunk_rows
        self.threads = max(1, int(threads))
        # scanning threads: every thread but the one running the ordered pass
        self.workers = self.threads - 1
        self.block_bytes = int(
            block_bytes if block_bytes is not None else min(8 << 20, max(1 << 20, chunk_rows * 128))
        )
        self.depth = self.threads + 1  # blocks put and not yet taken (see run)
        self.skips = SkipLog() if not strict else None
        self.fmt: dict[str, Any] = {}
        # syscall names seen: global id -> name and its attributes
        self.names: list[str] = []
        self.name_ids: dict[str, int] = {}
        self.g_op = np.zeros(0, dtype=np.int8)
        self.g_shape = np.zeros(0, dtype=np.int8)
        self.g_pos = np.zeros(0, dtype=np.int8)
        self.g_flags = np.zeros(0, dtype=np.int16)
        self.g_layout = np.zeros(0, dtype=np.int8)  # _TWO_SIDED layout, 0: one side
        # carried state
        self.split_carry: tuple[str, int] | None = None
        self.utf8_bad: list[tuple[int, str, object]] = []
        self.last_pid: int | None = None  # last prefixed pid ([pid N] captures)
        self.leader_alive = True
        self.last_sod: int | None = None  # -tt: last raw time of day [ns]
        self.days = 0
        self.r_ns = 0  # -r: the time of the last line, since the first [ns]
        self.t0: int | None = None
        self.t_max: int | None = None  # latest timestamp, lines and call ends [ns]
        self.t_gmax: int | None = None  # latest line timestamp [ns]
        self.pid_max: dict[int, int] = {}
        self.first_pid: int | None = None
        self.pend: dict[str, Any] | None = None  # unfinished calls
        self.fds: dict[str, np.ndarray] | None = None  # (pid, fd) state
        self.cwd: str | None = None
        self.key2fid: dict[str, int] = {}
        self.path2fid: dict[str, int] = {}
        self.new_files: list[tuple[int, str]] = []
        self.exe: tuple[bool, str] | None = None  # (succeeded, args)
        # counters
        self.lines = 0
        self.calls = 0
        self.io_calls = 0
        self.non_io = np.zeros(0, dtype=np.int64)
        self.signals = 0
        self.exits = 0
        self.messages = 0
        self.pairs = 0
        self.unresolved = 0
        self.second_rows = 0

    # ------------------------------------------------------------ names
    def _gid(self, name: str) -> int:
        """Global id of a syscall name; a new name gets its op, shape and flags noted."""
        gid = self.name_ids.get(name)
        if gid is None:
            gid = len(self.names)
            self.names.append(name)
            self.name_ids[name] = gid
            op, shape, pos, flags, layout = _name_attrs(name)
            self.g_op = np.append(self.g_op, np.int8(op))
            self.g_shape = np.append(self.g_shape, np.int8(shape))
            self.g_pos = np.append(self.g_pos, np.int8(pos))
            self.g_flags = np.append(self.g_flags, np.int16(flags))
            self.g_layout = np.append(self.g_layout, np.int8(layout))
            self.non_io = np.append(self.non_io, 0)
        return gid

    # ------------------------------------------------------------ errors
    def _fail(self, line: int | None, expected: str, got: object) -> InputError:
        """The InputError for ``line`` of this input."""
        return InputError(self.name, line, expected, got, kind=KIND)

    def _skip_or_raise(self, problems: list[tuple[int, str, object]]) -> None:
        """Raise the earliest problem (strict) or log them all (tolerant)."""
        if not problems:
            return
        problems.sort(key=lambda p: p[0])
        if self.strict:
            line, expected, got = problems[0]
            raise self._fail(line, expected, got)
        assert self.skips is not None
        for line, expected, _got in problems:
            self.skips.add(line, f"expected {expected}")

    # ------------------------------------------------------------ driver
    def run(self, fh: BinaryIO, plain: bool = False) -> Iterator[Parsed]:
        """Parse the whole input: one Parsed per batch with rows, then the final one.

        With ``threads`` > 1, blocks are scanned on ``threads - 1`` worker
        threads (numpy and Arrow release the GIL) while this thread reads the
        next block and takes the scanned ones through :meth:`_batch` in input
        order, scanning queued blocks itself when the block it needs next is
        still being scanned (:class:`~iochar.load.strace._steal.Scans`). At
        most ``threads + 1`` blocks are in flight, so memory stays bounded by a
        few blocks. ``plain``: ``fh`` is a plain file, read by
        :func:`~iochar.load.strace._read.padded_blocks` (else ``fh`` comes from
        :func:`~iochar.load._text.open_text`).
        """
        scans = Scans(self._scan_block, self.workers) if self.workers else None
        depth = self.depth
        seen_any = False
        try:
            for first_line, data, n, complete in self._blocks(fh, plain):
                seen_any = True
                job = self._split(data, n, first_line, complete)
                if scans is None:
                    yield from self._ordered(self._scan_block(*job))
                    continue
                scans.put(*job)
                while len(scans) >= depth:
                    yield from self._ordered(scans.take())
            while scans is not None and len(scans):
                yield from self._ordered(scans.take())
        finally:
            if scans is not None:
                scans.close()
        if not seen_any:
            raise self._fail(1, "strace output (timestamped syscall lines)", "")
        if self.split_carry is not None:  # the input ended inside a split line
            text, line = self.split_carry
            self._skip_or_raise([(line, _EXPECT_TRUNC, text)])
        yield self._finish()

    def _blocks(
        self, fh: BinaryIO, plain: bool
    ) -> Iterator[tuple[int, np.ndarray | bytes, int, bool]]:
        """The input's blocks of whole lines, once the format is known:
        (first line, bytes or zero-padded uint8 buffer, length, complete).

        The format comes from the input's first 64 KiB however small the
        blocks are: blocks are held back until that much has been read.
        """
        if plain:
            blocks: Iterator[tuple[int, Any, int, bool]] = padded_blocks(fh, self.block_bytes)
        else:
            blocks = (
                (line, data, len(data), complete)
                for line, data, complete in iter_line_blocks(fh, self.block_bytes)
            )
        head: list[tuple[int, Any, int, bool]] = []
        size = 0
        for item in blocks:
            if self.fmt:
                yield item
                continue
            head.append(item)
            size += item[2]
            if size >= _HEAD_BYTES:
                self._set_format(b"".join(_as_bytes(d, n) for _, d, n, _ in head))
                yield from head
                head = []
        if head:  # the whole input is shorter than the head
            self._set_format(b"".join(_as_bytes(d, n) for _, d, n, _ in head))
            yield from head

    def _set_format(self, head: bytes) -> None:
        """Detect the trace's format (prefixes, clock, -T, -y) from its first 64 KiB."""
        fmt = _detect(head[:_HEAD_BYTES].decode("utf-8", "replace"))
        if fmt is None:
            first = head.split(b"\n", 1)[0]
            untimed = _PY_UNTIMED.match(first.decode("utf-8", "replace"))
            raise self._fail(1, _EXPECT_TIMED if untimed else _EXPECT_LINE, first)
        self.fmt = fmt
        self.cwd = fmt["cwd"]  # the first working directory -y shows

    def _split(
        self, data: np.ndarray | bytes, n: int, first_line: int, complete: bool
    ) -> tuple[Any, ...]:
        """What :meth:`_scan_block` needs of a block, in input order (on this thread).

        stderr captures whose lines strace's ``strace: Process N attached``
        message cut in two are re-joined here, as that carries a line from
        one block to the next; every other block is split into lines by its
        scan.
        """
        if self.split_carry is None and self.fmt["prefix"] == "bare":
            return (data, n, None, first_line, complete, None, 0)
        block = _as_bytes(data, n)
        if self.split_carry is None and b"strace: Process" not in block:
            return (data, n, None, first_line, complete, None, 0)
        bad = self._utf8_check(block, len(block), first_line)
        before = self.messages
        joined, *lines = self._lines_joined(block, first_line)
        msgs, self.messages = self.messages - before, before
        return (joined, len(joined), tuple(lines), first_line, complete, bad, msgs)

    def _utf8_check(
        self, data: np.ndarray | bytes, n: int, first_line: int
    ) -> list[tuple[int, str, object]]:
        """The first line of a block that is not UTF-8 (strict mode), as a problem."""
        if not self.strict:
            return []
        if isinstance(data, bytes):
            if data.isascii():
                return []
            block = data
        else:
            if not has_high(data[:n]):
                return []
            block = bytes(data[:n])
        try:
            block.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = first_line + block.count(b"\n", 0, exc.start)
            lo = block.rfind(b"\n", 0, exc.start) + 1
            hi = block.find(b"\n", exc.start)
            return [(line, "UTF-8 text", block[lo : hi if hi >= 0 else None])]
        return []

    def _scan_block(
        self,
        data: np.ndarray | bytes,
        n: int,
        lines: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
        first_line: int,
        complete: bool,
        utf8_bad: list[tuple[int, str, object]] | None,
        messages: int,
    ) -> tuple[_Block | None, list[dict[str, Any]], list, int]:
        """Scan a block's batches (:meth:`_scan`); safe on any thread, reads no carried state."""
        if utf8_bad is None:
            utf8_bad = self._utf8_check(data, n, first_line)
        if lines is None:
            starts, ends, linenos = self._lines(data, n, first_line, complete)
        else:
            starts, ends, linenos = lines
        count = len(starts)
        if count == 0:
            return None, [], utf8_bad, messages
        blk = _Block.of_bytes(data) if isinstance(data, bytes) else _Block(data, n)
        scans = []
        for lo in range(0, count, self.chunk_rows):
            hi = min(count, lo + self.chunk_rows)
            last = (not complete) and hi == count
            scans.append(self._scan(blk, starts[lo:hi], ends[lo:hi], linenos[lo:hi], last))
        return blk, scans, utf8_bad, messages

    def _ordered(self, scanned: tuple[_Block | None, list[dict[str, Any]], list, int]):
        """Take a scanned block's batches through :meth:`_batch`, in input order."""
        blk, scans, utf8_bad, messages = scanned
        self.utf8_bad += utf8_bad
        self.messages += messages
        for scan in scans:
            assert blk is not None
            out = self._batch(blk, scan)
            if out is not None:
                yield out

    def _lines(
        self, data: np.ndarray | bytes, n: int, first_line: int, complete: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The block's lines: (starts, ends without newline, 1-based numbers)."""
        arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data[:n]
        nl = np.flatnonzero(arr == 10)
        starts = np.empty(len(nl), dtype=np.int64)
        starts[:1] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.astype(np.int64)
        if not complete:
            starts = np.append(starts, nl[-1] + 1 if len(nl) else 0)
            ends = np.append(ends, n)
        return starts, ends, first_line + np.arange(len(starts), dtype=np.int64)

    def _lines_joined(
        self, block: bytes, first_line: int
    ) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray]:
        """Slow path for stderr captures: re-join lines that strace's own
        ``strace: Process N attached`` message cut in two."""
        texts: list[str] = []
        numbers: list[int] = []
        carry = self.split_carry
        self.split_carry = None
        parts = block.decode("utf-8", "replace").split("\n")
        pieces = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        for i, text in enumerate(pieces):
            line = first_line + i
            if carry is not None:
                text, line = carry[0] + text, carry[1]
                carry = None
            m = _PY_MIDLINE_MSG.search(text)
            if m is not None and m.start() > 0:
                self.messages += 1
                carry = (text[: m.start()], line)
                continue
            texts.append(text)
            numbers.append(line)
        self.split_carry = carry
        raw = [t.encode("utf-8") for t in texts]
        lens = np.array([len(r) for r in raw], dtype=np.int64)
        starts = np.zeros(len(raw), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        ends = starts + lens - np.array([r.endswith(b"\n") for r in raw], dtype=np.int64)
        return b"".join(raw), starts, ends, np.asarray(numbers, dtype=np.int64)

    # ------------------------------------------------------------ one batch
    def _scan(
        self,
        blk: _Block,
        ls: np.ndarray,
        le: np.ndarray,
        linenos: np.ndarray,
        last_incomplete: bool,
    ) -> dict[str, Any]:
        """The fields of a batch's lines that depend on nothing before them.

        Pid prefixes, times of day, line kinds, syscall names (local codes),
        results, bad lines, the first fd and its ``-y`` path, and where the
        argument text lies; for the lines that are calls, signals or exits
        (``keep``), sliced to those lines. Reads only the format and
        ``strict``, so any thread may run it, for any block, in any order.
        """
        ok, pid, ts, body = self._prefixes(blk, ls)
        kind, name_st, name_len, last8, last16 = _line_kinds(blk, ok, body, le)
        loc, names, l_shape, l_flags = _local_names(blk, kind, name_st, name_len)
        after = name_st + name_len  # the '(' of a call, the ' ' before 'resumed>'
        res = self._results(blk, kind, le, after, last8, last16)
        problems: list[tuple[int, str, object]] = []
        msgs = self._bad_lines(
            blk, kind, ls, le, linenos, res["tail_bad"], last_incomplete, problems
        )
        keep = np.flatnonzero(kind >= _CALL)  # syscall, signal and exit lines
        s: dict[str, Any] = {
            "n": ls.size,
            "top": int(linenos[-1]),
            "names": names,
            "problems": problems,
            "messages": msgs,
            "kept": keep.size,
        }
        if keep.size == 0:
            return s
        kind, loc = kind[keep], loc[keep]
        s.update(kind=kind, loc=loc, pid=pid[keep], ts=ts[keep], lineno=linenos[keep])
        s.update(_first_fd(blk, keep, kind, loc, l_shape, after, le))
        s.update(_arg_spans(blk, keep, kind, l_flags[loc], after, le, res["aend"]))
        s["ls"], s["le"] = ls[keep], le[keep]
        s["res"] = {
            name: res[name][keep]
            for name in (
                "ret", "retok", "has_err", "err_st", "err_len", "has_rp", "rp_st", "rp_len", "dur"
            )
        }  # fmt: skip
        return s

    def _batch(self, blk: _Block, s: dict[str, Any]) -> Parsed | None:
        """Take a scanned batch through what depends on earlier lines; None when it
        completes no call."""
        self.lines += s["n"]
        problems = self._utf8_problems(s["top"]) + s["problems"]
        self.messages += s["messages"]
        # global name ids, given in order of first appearance as before
        l2g = np.array(
            [self._gid(nm) if _NAME_RE.match(nm) else -1 for nm in s["names"]] + [-1],
            dtype=np.int32,
        )
        if s["kept"] == 0:
            self._skip_or_raise(problems)
            return None
        k = {name: s[name] for name in _KEPT}
        res = s["res"]
        kind, lineno = k["kind"], k["lineno"]
        t = self._unwrap_midnight(k["ts"])
        if self.t0 is None:
            self.t0 = int(t[0])
        pid = self._assign_pids(k["pid"], kind)
        k["pid"], k["ts"] = pid, t
        good = self._in_time_order(blk, k["ls"], k["le"], pid, t, lineno, problems)
        if good is not None:
            k = {name: v[good] for name, v in k.items()}
            res = {name: v[good] for name, v in res.items()}
            if good.sum() == 0:
                self._skip_or_raise(problems)
                return None
        exited = self._note_kept(k["pid"], k["ts"], k["kind"])
        k["gid"] = l2g[k.pop("loc")]
        # pair <unfinished ...> with <... resumed>: one record per completed call
        old = self.pend
        rec, start = self._pair(blk, k, problems)
        self._skip_or_raise(problems)
        if rec.size == 0:
            self._drop_exited(exited)
            return None
        r = self._gather(blk, k, rec, start, old)
        r.update(_result_fields(blk, res, rec))
        return self._records(r, exited)

    def _utf8_problems(self, top: int) -> list[tuple[int, str, object]]:
        """Start the batch's problems with the non-UTF-8 lines up to line ``top``."""
        problems: list[tuple[int, str, object]] = []
        if self.utf8_bad:
            problems += [p for p in self.utf8_bad if p[0] <= top]
            self.utf8_bad = [p for p in self.utf8_bad if p[0] > top]
        return problems

    def _prefixes(self, blk: _Block, ls: np.ndarray) -> tuple[np.ndarray, ...]:
        """Read each line's pid prefix and timestamp: (ok, pid or -1, time [ns], rest's start)."""
        ok = np.ones(ls.size, dtype=bool)
        if self.fmt["prefix"] == "bare":
            pid, ts0 = _bare_pids(blk, ls, ok)
        else:
            pid, ts0 = _bracket_pids(blk, ls, ok)
        clock = self.fmt["clock"]
        if clock == "-r":  # right-aligned: '     0.000203 ' (after the pid, if any)
            ts0 = ts0 + blk.skip(ts0, 32, limit=16)
        ts, body = _timestamps(blk, ts0, ok, clock in ("-ttt", "-r"))
        _skip_relative(blk, body, ok)
        return ok, pid, ts, body

    def _results(
        self,
        blk: _Block,
        kind: np.ndarray,
        le: np.ndarray,
        after: np.ndarray,
        last8: np.ndarray,
        last16: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """Read each call's result: ' = ret[<path>][ ERRNO (text)][ (extra)][ <duration>]'.

        Also the position of the ')' closing its arguments (``aend``). Lines
        whose end does not parse become bad lines (``tail_bad``).
        """
        n = kind.size
        res = {
            name: np.zeros(n, dtype=np.int64)
            for name in ("ret", "aend", "err_st", "err_len", "rp_st", "rp_len")
        }
        res.update({name: np.zeros(n, dtype=bool) for name in ("retok", "has_err", "has_rp")})
        res["dur"] = np.full(n, np.nan)
        res["tail_bad"] = np.zeros(0, dtype=np.int64)
        ti = np.flatnonzero((kind == _CALL) | (kind == _RES))
        if ti.size == 0:
            return res
        buf = blk.buf
        lt = le[ti]
        tail_end, timed = lt.copy(), None
        good = np.ones(ti.size, dtype=bool)
        if self.fmt["durations"]:
            res["dur"][ti], tail_end, timed = _durations(last8[ti], last16[ti], lt)
        e_at = blk.last_eq(tail_end, after[ti])
        good &= e_at >= 0
        res["ret"][ti], res["retok"][ti], ret_end, q, valid = _return_values(blk, e_at + 2)
        c = buf[ret_end]
        lastc = buf[tail_end - 1]
        good &= valid
        good &= (ret_end == tail_end) | (((c == 32) | (c == 60)) & ((lastc == 41) | (lastc == 62)))
        if timed is not None:
            good &= timed | q
        # the ')' before the padding spaces in front of ' = '
        close = e_at - 1 - blk.skip_back(e_at, 32)
        good &= (buf[close] == 41) & (close >= after[ti])
        res["aend"][ti] = close
        _errors_and_paths(blk, res, ti, good, ret_end, tail_end, c, lastc)
        res["tail_bad"] = ti[~good]
        kind[res["tail_bad"]] = _BAD
        return res

    def _bad_lines(
        self,
        blk: _Block,
        kind: np.ndarray,
        ls: np.ndarray,
        le: np.ndarray,
        linenos: np.ndarray,
        tail_bad: np.ndarray,
        last_incomplete: bool,
        problems: list[tuple[int, str, object]],
    ) -> int:
        """Mark strace's own messages among the bad lines and report the others as problems.

        Returns the number of strace messages.
        """
        n = kind.size
        if last_incomplete and self.strict:
            # strace ends every line with a newline: without one, the input was cut
            kind[n - 1] = _BAD
        bad = np.flatnonzero(kind == _BAD)
        if bad.size == 0:
            return 0
        msg = blk.match(ls[bad], _W_MSG) | (
            blk.match(ls[bad], _W_PROC1) & blk.match(ls[bad] + 8, _W_PROC2)
        )
        kind[bad[msg]] = _MSG
        bad = bad[~msg]
        tail_set = set(tail_bad.tolist()) if tail_bad.size < 10_000 else set(tail_bad)
        for i in bad[:1] if self.strict else bad:
            if last_incomplete and i == n - 1:
                expected = _EXPECT_TRUNC
            elif i in tail_set:
                expected = _EXPECT_TAIL
            else:
                expected = _EXPECT_LINE
            problems.append((int(linenos[i]), expected, blk.text(ls[i], le[i])))
        return int(msg.sum())

    def _unwrap_midnight(self, t: np.ndarray) -> np.ndarray:
        """Add the days passed to ``-t``/``-tt`` times of day (they wrap at midnight);
        sum ``-r``'s times since the previous line into times since the first."""
        if self.fmt["clock"] == "-ttt":
            return t
        if self.fmt["clock"] == "-r":
            total = np.cumsum(t) + self.r_ns
            self.r_ns = int(total[-1])
            return total
        prev = np.empty_like(t)
        prev[1:] = t[:-1]
        prev[0] = self.last_sod if self.last_sod is not None else t[0]
        days = np.cumsum(t < prev - _HALF_DAY_NS) + self.days
        self.last_sod = int(t[-1])
        self.days = int(days[-1])
        return t + days * _DAY_NS

    def _in_time_order(
        self,
        blk: _Block,
        ls: np.ndarray,
        le: np.ndarray,
        pid: np.ndarray,
        t: np.ndarray,
        lineno: np.ndarray,
        problems: list[tuple[int, str, object]],
    ) -> np.ndarray | None:
        """Report lines earlier than an earlier line of their pid; the mask of the others.

        None when every line is in order (the common case, checked first).
        """
        gmax = self.t_gmax
        if bool((t[1:] >= t[:-1]).all()) and (gmax is None or t[0] >= gmax):
            return None
        frame = pl.DataFrame({"pid": pid, "ts": t})
        prev_max = pl.col("ts").cum_max().shift(1).over("pid")
        if self.pid_max:
            carried = pl.col("pid").replace_strict(
                self.pid_max, default=None, return_dtype=pl.Int64
            )
            prev_max = pl.max_horizontal(prev_max, carried)
        back = frame.select(back=(pl.col("ts") < prev_max).fill_null(False))["back"]
        back = back.to_numpy()
        if not back.any():
            return None
        for i in np.flatnonzero(back)[: 1 if self.strict else None]:
            problems.append(
                (
                    int(lineno[i]),
                    f"a timestamp not earlier than the previous line of pid {pid[i]}",
                    blk.text(ls[i], le[i]),
                )
            )
        return ~back

    def _note_kept(self, pid: np.ndarray, t: np.ndarray, kind: np.ndarray) -> list[int]:
        """Carry the kept lines' latest times, first pid, signal and exit counts; who exited."""
        latest = pl.DataFrame({"pid": pid, "ts": t}).group_by("pid").agg(pl.col("ts").max())
        for p, tmax in zip(latest["pid"].to_list(), latest["ts"].to_list(), strict=True):
            old = self.pid_max.get(p)
            self.pid_max[p] = tmax if old is None or tmax > old else old
        tmax = int(t.max())
        gmax = self.t_gmax
        self.t_gmax = tmax if gmax is None else max(gmax, tmax)
        self.t_max = tmax if self.t_max is None else max(self.t_max, tmax)
        if self.first_pid is None:
            self.first_pid = int(pid[0])
        self.signals += int((kind == _SIG).sum())
        self.exits += int((kind == _EXIT).sum())
        return np.unique(pid[kind == _EXIT]).tolist()

    def _assign_pids(self, pid: np.ndarray, kind: np.ndarray) -> np.ndarray:
        """Fill the pid of unprefixed lines (see the module's limits)."""
        if self.fmt["prefix"] == "bare":
            return pid
        leader = self.fmt["leader"] if self.fmt["leader"] is not None else 0
        unp = pid < 0
        m = pid.size
        if unp.any():
            alive = np.full(m, self.leader_alive)
            if self.leader_alive:
                ex = np.flatnonzero((kind == _EXIT) & (unp | (pid == leader)))
                if ex.size:
                    alive[ex[0] + 1 :] = False
                    self.leader_alive = False
            idx = np.where(unp, -1, np.arange(m))
            np.maximum.accumulate(idx, out=idx)
            before = self.last_pid if self.last_pid is not None else leader
            ffill = np.where(idx >= 0, pid[np.maximum(idx, 0)], before)
            filled = np.where(unp, np.where(alive, leader, ffill), pid)
        else:
            if self.leader_alive and ((kind == _EXIT) & (pid == leader)).any():
                self.leader_alive = False
            filled = pid
        prefixed = np.flatnonzero(~unp)
        if prefixed.size:
            self.last_pid = int(pid[prefixed[-1]])
        return filled

    # ------------------------------------------------------------ unfinished/resumed pairs
    def _pair(
        self, blk: _Block, k: dict[str, Any], problems: list
    ) -> tuple[np.ndarray, np.ndarray]:
        """Records (completed calls) as (end line, start line) row indices.

        A start index below 0 names a call still unfinished at the end of the
        previous batch (``-1 - i`` for ``self.pend`` entry ``i``).
        """
        kind = k["kind"]
        calls = kind == _CALL
        pend = self.pend
        if pend is None and not ((kind == _UNF) | (kind == _RES)).any():
            rec = np.flatnonzero(calls)
            return rec, rec.copy()
        s = _link_split_calls(kind, k["pid"], k["lineno"], k["gid"], pend)
        self._report_unpaired(blk, k, s, problems)
        src = s["src"]
        starts = np.arange(kind.size, dtype=np.int64)
        is_rec = calls.copy()
        ok_r = np.flatnonzero(s["res_ok"])
        starts[src[ok_r]] = src[ok_r - 1]
        is_rec[src[ok_r]] = True
        en = np.flatnonzero(s["ended"])
        starts[src[en + 1]] = src[en]
        is_rec[src[en + 1]] = True
        self.pairs += ok_r.size
        self.unresolved += en.size
        pj = np.flatnonzero(s["pending"])
        self.pend = self._pending(blk, k, src[pj], pend) if pj.size else None
        rec = np.flatnonzero(is_rec)
        return rec, starts[rec]

    def _report_unpaired(
        self, blk: _Block, k: dict[str, Any], s: dict[str, np.ndarray], problems: list
    ) -> None:
        """Report resumed lines with no unfinished start, and unfinished calls never resumed."""
        s_pid, s_line, s_gid, s_src = s["pid"], s["line"], s["gid"], s["src"]
        is_unf = s["kind"] == _UNF
        bad = np.flatnonzero((s["kind"] == _RES) & ~s["res_ok"])
        if self.strict and bad.size:
            bad = bad[np.argmin(s_line[bad])][None]
        for j in bad:
            name = self.names[s_gid[j]]
            problems.append(
                (
                    int(s_line[j]),
                    f"an earlier '{name}(... <unfinished ...>' line of pid {s_pid[j]}",
                    blk.text(k["ls"][s_src[j]], k["le"][s_src[j]]),
                )
            )
        bad = np.flatnonzero(is_unf & ~s["paired"] & ~s["ended"] & ~s["pending"])
        if self.strict:
            bad = bad[s["n_kind"][bad] != _RES]  # a mismatched resumed line is reported itself
            if bad.size:
                bad = bad[np.argmin(s_line[bad + 1])][None]
        for j in bad:
            expected = f"'<... {self.names[s_gid[j]]} resumed>' for pid {s_pid[j]}"
            if self.strict:
                nxt = s_src[j + 1]
                problems.append(
                    (int(s_line[j + 1]), expected, blk.text(k["ls"][nxt], k["le"][nxt]))
                )
            else:
                problems.append((int(s_line[j]), expected + " (unfinished call dropped)", None))

    @staticmethod
    def _take(cur: np.ndarray, old: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
        """``cur[idx]``, where an index below 0 reads ``old[-1 - idx]``."""
        out = cur[np.maximum(idx, 0)]
        neg = np.flatnonzero(idx < 0)
        if neg.size:
            assert old is not None
            out[neg] = old[-1 - idx[neg]]
        return out

    def _pending(
        self, blk: _Block, k: dict[str, Any], src: np.ndarray, old: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Unfinished calls carried to the next batch, their text copied out."""
        out: dict[str, Any] = {}
        for name in ("pid", "lineno", "ts", "gid", "fd", "fdok"):
            out[name] = self._take(k[name], None if old is None else old[name], src)
        ann: list[str | None] = []
        args: list[str | None] = []
        for s in src.tolist():
            if s < 0:
                assert old is not None
                ann.append(old["ann"][-1 - s])
                args.append(old["args"][-1 - s])
            else:
                a0, al = int(k["ann_st"][s]), int(k["ann_len"][s])
                ann.append(blk.text(a0, a0 + al) if k["has_ann"][s] else None)
                g0, gl = int(k["a_st"][s]), int(k["a_len"][s])
                args.append(blk.text(g0, g0 + gl) if k["need"][s] else None)
        out["ann"], out["args"] = ann, args
        return out

    def _gather(
        self,
        blk: _Block,
        k: dict[str, Any],
        rec: np.ndarray,
        start: np.ndarray,
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Per-record fields: start side from the start line, the rest from ``rec``."""

        def take(name: str) -> np.ndarray:
            """The start side's ``name`` field (carried entries for negative starts)."""
            return self._take(k[name], None if old is None else old[name], start)

        here = start >= 0
        st = np.maximum(start, 0)
        gid = take("gid")
        r: dict[str, Any] = {
            "pid": k["pid"][rec],
            "seq": k["lineno"][rec],
            "ts": take("ts"),
            "gid": gid,
            "fd": take("fd"),
            "fdok": take("fdok"),
        }
        has_ann = k["has_ann"][st] & here
        ann = pl.Series(blk.strings(k["ann_st"][st], k["ann_len"][st], has_ann), dtype=pl.String)
        away = np.flatnonzero(~here)
        if away.size:
            assert old is not None
            values = [old["ann"][-1 - s] for s in start[away]]
            ann = ann.scatter(away, pl.Series(values, dtype=pl.String))
            has_ann[away] = [v is not None for v in values]
        r["ann"], r["has_ann"] = ann, has_ann
        # argument text of the calls that need it: start part + resumed part
        ai = np.flatnonzero((self.g_flags[gid] & _F_ARGS) != 0)
        r["ai"] = ai
        if ai.size:
            sa, ra = st[ai], rec[ai]
            first = pl.Series(
                blk.strings(k["a_st"][sa], k["a_len"][sa], k["need"][sa] & here[ai]),
                dtype=pl.String,
            )
            far = np.flatnonzero(~here[ai])
            if far.size:
                assert old is not None
                values = [old["args"][-1 - s] for s in start[ai[far]]]
                first = first.scatter(far, pl.Series(values, dtype=pl.String))
            resumed = k["kind"][ra] == _RES
            rest = pl.Series(
                blk.strings(k["a_st"][ra], k["a_len"][ra], resumed & k["need"][ra]),
                dtype=pl.String,
            )
            r["args"] = first + rest.fill_null("")
        else:
            r["args"] = pl.Series([], dtype=pl.String)
        return r

    # ------------------------------------------------------------ records -> ops
    def _records(self, r: dict[str, Any], exited: list[int]) -> Parsed:
        """Contract rows from call records (numpy arrays, one entry per call)."""
        self.calls += r["pid"].size
        gid = r["gid"]
        op, shape = self.g_op[gid], self.g_shape[gid]
        poskind, flags = self.g_pos[gid], self.g_flags[gid]
        second = None
        if ((flags & _F_TWO) != 0).any():  # transfers, rename, link: a row per side
            r, sides = self._two_sided(r, op, poskind, flags)
            gid, second = r["gid"], sides["second"]
            op, shape, poskind, flags = sides["op"], self.g_shape[gid], sides["pos"], sides["flags"]
        ok = r["retok"] & ~r["has_err"]
        a = self._arguments(r, shape, poskind, flags, ok)
        if second is not None:
            ptr = poskind == _POS_PTR
            a["off"] = np.where(ptr, sides["off"], a["off"])
            a["off_ok"] = np.where(ptr, sides["off_ok"], a["off_ok"])
        dfid, dvalid, rfid, rvalid = self._fids(r, a)
        ev = _fd_events(r, a, op, shape, poskind, flags, ok)
        ev["ev_fid"] = np.where(rvalid, rfid, dfid)
        ev["ev_ok"] = ev["is_new"] & (rvalid | dvalid)
        sel = ev["advancing"] | ev["base_ev"] | ev["path_ev"] | ~dvalid
        sel = np.flatnonzero(ev["key_ok"] & sel)
        lk, lk_ok, pos, pos_ok, append_w = self._positions(r["pid"], ev["key"], ev, sel, exited)
        # a call's file: the one it names, else the one its fd was left with
        fid = np.where(dvalid, dfid, lk)
        fid_ok = dvalid | lk_ok
        opc = np.where(op >= 0, op, np.where(fid_ok, _OTHER, -1))
        io = np.flatnonzero(opc >= 0)
        self.non_io += np.bincount(gid[opc < 0], minlength=len(self.names))
        explicit = (poskind == _POS_EXPLICIT) | (poskind == _POS_EXPLICIT2) | (poskind == _POS_PTR)
        which = [ev["seek"], ev["advancing"], explicit]
        offset = np.select(which, [ev["seek_pos"], pos, a["off"]], 0)
        offset_ok = np.select(which, [ev["seek_ok"], ~append_w & pos_ok, a["off_ok"]], False)
        extra = 0 if second is None else int(second[io].sum())
        self.io_calls += io.size - extra
        self.second_rows += extra
        tables = {"ops": self._ops_table(r, io, opc, fid, fid_ok, offset, offset_ok, ok)}
        if self.new_files:
            tables["files"] = self._files_table()
        return Parsed(tables=tables, meta=self._meta(final=False), skips=self.skips)

    def _two_sided(
        self, r: dict[str, Any], op: np.ndarray, poskind: np.ndarray, flags: np.ndarray
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Give each two-sided call (:data:`_syscalls._TWO_SIDED`) a second record.

        A transfer between two fds (copy_file_range, splice, sendfile, tee) is
        a read on its in-fd's file and a write on its out-fd's file, each of
        the returned byte count. With a NULL offset pointer (or none, as
        sendfile's out-fd and tee's pipes) a side reads or writes at its fd's
        position and advances it; with ``[N]`` it transfers at N and leaves the
        fd's position alone (man 2 copy_file_range, splice, sendfile; strace
        prints the pointed value before the call, sendfile's as ``[N] => [M]``).
        rename/renameat/renameat2/link/linkat name two paths: the first
        record keeps the old path, the second the new one. Records follow
        each other in argument order. A transfer whose arguments do not parse
        keeps one record (its first fd's side) and leaves that fd's position
        unknown.

        Returns the records with the second ones inserted after their first,
        and per record: ``second`` (the inserted ones), ``op``, ``pos`` (how
        it moves its fd's position), ``flags``, ``off``/``off_ok`` (``[N]``).
        """
        n = flags.size
        gid = r["gid"]
        two = np.flatnonzero((flags & _F_TWO) != 0)
        lay = self.g_layout[gid[two]].astype(np.int64)
        text = r["args"].gather(np.searchsorted(r["ai"], two))
        frame = pl.DataFrame({"j": np.arange(two.size), "t": text, "lay": lay})
        cols = {"fd2": pl.Int64, "ann2": pl.String, "p1": pl.String, "o1": pl.Int64}
        cols.update({"p2": pl.String, "o2": pl.Int64, "rest": pl.String})
        parts = [pl.DataFrame(schema={"j": pl.Int64, **cols})]
        t = pl.col("t")
        for layout, pattern in _P_XFER.items():
            sub = frame.filter(pl.col("lay") == layout)
            if sub.height:
                g = sub.select("j", g=t.str.extract_groups(pattern)).unnest("g")
                parts.append(g.with_columns(rest=pl.lit(None, pl.String)).select("j", *cols))
        for layout, pattern in _P_FIRST_PATH.items():
            sub = frame.filter(pl.col("lay") == layout)
            if sub.height:
                rest = pl.when(t.str.contains(pattern)).then(t.str.replace(pattern, ""))
                parts.append(sub.select("j", rest=rest))
        got = pl.concat(
            [
                p.with_columns(
                    pl.col(c).cast(d, strict=False) for c, d in cols.items() if c in p.columns
                )
                for p in parts
            ],
            how="diagonal",
        ).sort("j")
        x = {c: got[c] for c in cols}
        for g in "12":
            ptr, val = got[f"p{g}"].fill_null(""), got[f"o{g}"]
            x[f"m{g}"] = ptr.is_in(["", "NULL"]).to_numpy()
            x[f"k{g}"] = val.is_not_null().to_numpy()
            x[f"o{g}"] = val.fill_null(0).to_numpy()
        is_x = x["rest"].is_null().to_numpy() & np.isin(lay, list(_P_XFER))
        parsed = np.where(
            is_x, x["fd2"].is_not_null().to_numpy(), x["rest"].is_not_null().to_numpy()
        )
        # the new order: every record, each parsed two-sided one followed by its second
        add = two[parsed]
        cat = np.concatenate([np.arange(n), add])
        order = np.argsort(cat, kind="stable")
        idx = cat[order]
        second = order >= n
        out: dict[str, Any] = {
            k: v[idx] for k, v in r.items() if k != "ai" and isinstance(v, np.ndarray)
        }
        out["err"], out["rpath"] = r["err"], r["rpath"]  # read through out["src"]
        out["src"] = idx
        sec_rows = np.flatnonzero(second)
        j_of = np.full(n, -1, dtype=np.int64)
        j_of[two] = np.arange(two.size)
        j_sec = j_of[idx[sec_rows]]  # two-sided entry of each second record
        j_first = j_of[idx]  # -1: one-sided
        xs = np.flatnonzero(is_x[j_sec])  # second records of transfers
        ann = r["ann"].gather(idx)
        if xs.size:
            rows = sec_rows[xs]
            out["fd"][rows] = x["fd2"].gather(j_sec[xs]).to_numpy()
            out["fdok"][rows] = True
            ann2 = x["ann2"].gather(j_sec[xs])
            ann = ann.scatter(rows, ann2)
            out["has_ann"][rows] = ann2.is_not_null().to_numpy()
        out["ann"] = ann
        # argument text: the calls that keep it, a path call's second without its first path
        ai, has_args = r["ai"], (flags & _F_ARGS) != 0
        new_ai = np.flatnonzero(has_args[idx])
        args = r["args"].gather(np.searchsorted(ai, idx[new_ai]))
        ps = np.flatnonzero(second[new_ai] & ~is_x[np.maximum(j_first[new_ai], 0)])
        if ps.size:
            args = args.scatter(ps, x["rest"].gather(j_first[new_ai[ps]]))
        out["ai"], out["args"] = new_ai, args
        # each side's op and position rule
        new_op, new_pos, new_flags = op[idx], poskind[idx], flags[idx]
        off = np.zeros(idx.size, dtype=np.int64)
        off_ok = np.zeros(idx.size, dtype=bool)
        xrows = np.flatnonzero((j_first >= 0) & is_x[np.maximum(j_first, 0)])
        if xrows.size:
            jx = j_first[xrows]
            sec = second[xrows]
            new_op[xrows] = _XFER_OP[lay[jx], sec.astype(np.int64)]
            ok_x = parsed[jx]
            # per side: no pointer or NULL -> at the fd's position; [N] -> at N
            moves = np.where(sec, x["m2"][jx], x["m1"][jx])
            new_pos[xrows] = np.where(ok_x, np.where(moves, _POS_ADVANCE, _POS_PTR), _POS_NONE)
            new_flags[xrows] = np.where(ok_x, new_flags[xrows] & ~_F_CLOBBER, new_flags[xrows])
            off[xrows] = np.where(sec, x["o2"][jx], x["o1"][jx])
            off_ok[xrows] = np.where(sec, x["k2"][jx], x["k1"][jx]) & ok_x & ~moves
        sides = {"second": second, "op": new_op, "pos": new_pos, "flags": new_flags}
        sides.update(off=off, off_ok=off_ok)
        return out, sides

    def _ops_table(
        self,
        r: dict[str, Any],
        io: np.ndarray,
        opc: np.ndarray,
        fid: np.ndarray,
        fid_ok: np.ndarray,
        offset: np.ndarray,
        offset_ok: np.ndarray,
        ok: np.ndarray,
    ) -> pa.Table:
        """Build the ``ops`` rows of the records ``io`` (the calls on a file)."""
        assert self.t0 is not None
        gid, ret = r["gid"], r["ret"]
        rw = (opc == _OP_CODE["read"]) | (opc == _OP_CODE["write"])
        t_start = (r["ts"][io] - self.t0) / 1e9  # numpy: the same bits whatever the chunking
        dur = r["dur"][io]
        return pa.table(
            {
                "job_id": _nullable(np.zeros(io.size, dtype=np.int64)),
                "rank": _nullable(r["pid"][io].astype(np.int32)),
                "file_id": _nullable(fid[io], fid_ok[io]),
                "op": pa.DictionaryArray.from_arrays(
                    _nullable(opc[io].astype(np.int8)), _strings(list(OPS))
                ).cast(pa.string()),
                "offset": _nullable(offset[io], offset_ok[io]),
                "size": _nullable(ret[io], (rw & ok)[io]),
                "t_start": _nullable(t_start),
                "t_end": _nullable(t_start + np.where(np.isnan(dur), 0.0, dur)),
                "call": pa.DictionaryArray.from_arrays(
                    _nullable(gid[io]), _strings(self.names)
                ).cast(pa.string()),
                "error": r["err"].cast(pa.string()).take(_nullable(_src(r, io))),
            }
        )

    def _files_table(self) -> pa.Table:
        """Hand out the files first seen since the last chunk as ``files`` rows."""
        fids, paths = zip(*self.new_files, strict=True)
        self.new_files = []
        return pa.table(
            {
                "job_id": _nullable(np.zeros(len(fids), dtype=np.int64)),
                "file_id": _nullable(np.array(fids, dtype=np.int64)),
                "path": _strings(list(paths)),
            }
        )

    def _arguments(
        self,
        r: dict[str, Any],
        shape: np.ndarray,
        poskind: np.ndarray,
        flags: np.ndarray,
        ok: np.ndarray,
    ) -> dict[str, Any]:
        """What the argument text of the few calls that need it says."""
        n = shape.size
        a: dict[str, Any] = {
            name: np.zeros(n, dtype=np.int64) for name in ("dirfd", "mfd", "off", "llpos")
        }
        for name in ("dirfd_ok", "mfd_ok", "off_ok", "llpos_ok", "dupfd", "append"):
            a[name] = np.zeros(n, dtype=bool)
        ai = r["ai"]
        args = pl.col("args")
        sub = pl.DataFrame(
            {
                "i": ai,
                "args": r["args"],
                "shape": shape[ai],
                "poskind": poskind[ai],
                "flags": flags[ai],
                "ok": ok[ai],
                "ret": r["ret"][ai],
                "ann": r["ann"].gather(ai),
                "rpath": pl.Series(r["rpath"], dtype=pl.String).gather(_src(r, ai)),
            }
        )
        sh, pk, fl = pl.col("shape"), pl.col("poskind"), pl.col("flags")
        # MAP_ANONYMOUS ignores its fd (man 2 mmap): such a mapping names no file
        file_map = (sh == _MMAP) & ~args.str.contains("MAP_ANONYMOUS", literal=True)
        sub = sub.with_columns(
            pl.when(sh.is_in((_PATH_FIRST, _AT_PATH)))
            .then(args)
            .str.extract_groups(_P_PATHARG)
            .alias("p"),
            gann=pl.when(((sh == 0) | file_map) & args.str.contains("<", literal=True))
            .then(args)
            .str.extract(_P_ANYFD, 1),
            # an fd beyond int64 names no open file: no fd, as for offsets below
            mfd=pl.when(file_map).then(args).str.extract(_P_MMAPFD, 1).cast(pl.Int64, strict=False),
            off=pl.coalesce(
                pl.when(pk == _POS_EXPLICIT).then(args).str.extract(_P_OFF, 1),
                pl.when(pk == _POS_EXPLICIT2).then(args).str.extract(_P_OFF2, 1),
            ).cast(pl.Int64, strict=False),
            llpos=pl.when(pk == _POS_LLSEEK)
            .then(args)
            .str.extract(_P_LLSEEK, 1)
            .cast(pl.Int64, strict=False),
            dupfd=((fl & _F_FCNTL) != 0) & args.str.contains("F_DUPFD", literal=True),
            append=((fl & _F_OPEN) != 0) & args.str.contains("O_APPEND", literal=True),
        ).unnest("p")
        sp, dirfd = pl.col("sp"), pl.col("dirfd")
        sub = sub.with_columns(
            dirfd_fd=pl.when(sp.is_null() | (sp == "")).then(dirfd.cast(pl.Int64, strict=False))
        )
        idx = sub["i"].to_numpy().astype(np.int64)
        pairs = (("dirfd", "dirfd_fd"), ("mfd", "mfd"), ("off", "off"), ("llpos", "llpos"))
        for name, col in pairs:
            values = sub[col]
            a[name][idx] = values.fill_null(0).to_numpy()
            a[name + "_ok"][idx] = values.is_not_null().to_numpy()
        for name in ("dupfd", "append"):
            a[name][idx] = sub[name].fill_null(False).to_numpy()
        a["sub"] = sub
        self._note_exe(sub)
        return a

    def _note_exe(self, sub: pl.DataFrame) -> None:
        """Note the first successful execve's arguments (the first execve's until one succeeds)."""
        if self.exe is None or not self.exe[0]:
            ex = sub.filter((pl.col("flags") & _F_EXEC) != 0)
            for ret_v, ok_v, text in ex.select("ret", "ok", "args").iter_rows():
                if ok_v and ret_v == 0:
                    self.exe = (True, text)
                    break
                if self.exe is None:
                    self.exe = (False, text)

    def _fids(self, r: dict[str, Any], a: dict[str, Any]) -> tuple[np.ndarray, ...]:
        """File ids: of the file a call names, and of the fd it returns."""
        n = r["pid"].size
        # most calls name their file by their first fd's -y path: categorical codes
        ann = r["ann"].cast(pl.Categorical)
        has_a = r["has_ann"]
        acode = ann.to_physical().fill_null(0).to_numpy().astype(np.int64)
        # the others: path arguments, returned fds, fds deeper in the arguments
        sub = _file_keys(self._with_cwd(a["sub"]))
        keyed = _first_seen(ann, acode, has_a, sub)
        batch_map, code2fid = self._file_ids(keyed, int(acode.max(initial=0)) + 1)
        dfid = np.where(has_a, code2fid[acode], 0)
        dvalid = has_a.copy()
        rfid = np.zeros(n, dtype=np.int64)
        rvalid = np.zeros(n, dtype=bool)
        if sub.height:
            mapped = sub.select(
                o=pl.col("pk").replace_strict(batch_map, default=None, return_dtype=pl.Int64),
                r=pl.col("rk").replace_strict(batch_map, default=None, return_dtype=pl.Int64),
            )
            ii = sub["i"].to_numpy().astype(np.int64)
            o, rr = mapped["o"], mapped["r"]
            o_ok = o.is_not_null().to_numpy() & ~has_a[ii]
            dfid[ii] = np.where(o_ok, o.fill_null(0).to_numpy(), dfid[ii])
            dvalid[ii] |= o_ok
            rfid[ii] = rr.fill_null(0).to_numpy()
            rvalid[ii] = rr.is_not_null().to_numpy()
        return dfid, dvalid, rfid, rvalid

    def _with_cwd(self, sub: pl.DataFrame) -> pl.DataFrame:
        """Add the working directory (``cwd``) relative path arguments start from."""
        dirfd, dann = pl.col("dirfd"), pl.col("dann")
        if sub["dann"].null_count() < sub.height or self.cwd is not None:
            # the working directory -y shows for AT_FDCWD, latest first
            cwd = pl.when(dirfd == "AT_FDCWD").then(dann).forward_fill()
            if self.cwd is not None:
                cwd = cwd.fill_null(self.cwd)
            sub = sub.with_columns(cwd=cwd)
            if sub.height and sub["cwd"][-1] is not None:
                self.cwd = sub["cwd"][-1]
            return sub
        return sub.with_columns(cwd=pl.lit(None, pl.String))

    def _file_ids(
        self, keyed: list[tuple[int, int | None, str]], ncodes: int
    ) -> tuple[dict[str, int], np.ndarray]:
        """Give each file key its file id (new paths get the next one, in order of appearance).

        Returns key -> file id, and fd-path categorical code -> file id.
        """
        batch_map: dict[str, int] = {}
        code2fid = np.zeros(ncodes, dtype=np.int64)
        for _pos, code, k in keyed:
            fid = self.key2fid.get(k)
            if fid is None:
                if "\x00" in k:
                    kbase, raw = k.split("\x00", 1)
                    path = _norm_path("s", raw, kbase or None)
                else:
                    path = _norm_path("a", k, None)
                fid = self.path2fid.get(path)
                if fid is None:
                    fid = len(self.path2fid)
                    self.path2fid[path] = fid
                    self.new_files.append((fid, path))
                if len(self.key2fid) < 1_000_000:
                    self.key2fid[k] = fid
            batch_map[k] = fid
            if code is not None:
                code2fid[code] = fid
        return batch_map, code2fid

    def _positions(
        self,
        pid: np.ndarray,
        key: np.ndarray,
        ev: dict[str, np.ndarray],
        sel: np.ndarray,
        exited: list[int],
    ) -> tuple[np.ndarray, ...]:
        """Each (pid, fd)'s file and position before each call: a stable sort by
        (pid, fd), then segment starts, forward fills and cumulative sums."""
        n = pid.size
        c, rid = self._fd_rows(pid, key, ev, sel)
        lk = np.zeros(n, dtype=np.int64)
        lk_ok = np.zeros(n, dtype=bool)
        pos = np.zeros(n, dtype=np.int64)
        pos_ok = np.zeros(n, dtype=bool)
        append_w = np.zeros(n, dtype=bool)
        if rid.size == 0:
            self._drop_exited(exited)
            return lk, lk_ok, pos, pos_ok, append_w
        gk = c["pid"] * (1 << 31) + (c["key"] & 0x7FFFFFFF)
        order = np.argsort(gk, kind="stable")
        gk = gk[order]
        c = {name: v[order] for name, v in c.items()}
        rid = rid[order]
        gs = np.ones(rid.size, dtype=bool)
        gs[1:] = gk[1:] != gk[:-1]
        f = _fd_walk(c, gs)
        self._carry_fd_state(c, f, gs, exited)
        real = rid >= 0
        rows = rid[real]
        lk[rows], lk_ok[rows] = f["lk"][real], f["ok"][real]
        pos[rows], pos_ok[rows] = f["pos"][real], f["pos_ok"][real]
        append_w[rows] = f["aw"][real]
        return lk, lk_ok, pos, pos_ok, append_w

    def _fd_rows(
        self, pid: np.ndarray, key: np.ndarray, ev: dict[str, np.ndarray], sel: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Gather the calls ``sel`` that touch an fd, after the fd states carried from before.

        Returns their columns and record rows (-1 for a carried state).
        """
        st = self.fds
        q = 0 if st is None else st["pid"].size
        cols = ("path_ev", "ev_fid", "ev_ok", "ev_append", "base_ev", "base", "base_ok", "adv")
        c = {name: ev[name][sel] for name in (*cols, "advancing", "is_write")}
        c["pid"], c["key"] = pid[sel], key[sel]
        rid = sel.astype(np.int64)
        if q:
            assert st is not None
            for name in ("pid", "key", "ev_fid", "ev_ok", "ev_append", "base", "base_ok"):
                c[name] = np.concatenate([st[name], c[name]])
            for name, value in (("path_ev", True), ("base_ev", True)):
                c[name] = np.concatenate([np.full(q, value), c[name]])
            for name in ("adv",):
                c[name] = np.concatenate([np.zeros(q, dtype=np.int64), c[name]])
            for name in ("advancing", "is_write"):
                c[name] = np.concatenate([np.zeros(q, dtype=bool), c[name]])
            rid = np.concatenate([np.full(q, -1, dtype=np.int64), rid])
        return c, rid

    def _carry_fd_state(
        self,
        c: dict[str, np.ndarray],
        f: dict[str, np.ndarray],
        gs: np.ndarray,
        exited: list[int],
    ) -> None:
        """Keep what each (pid, fd) is left with for the next batch (not for exited pids)."""
        last = np.ones(gs.size, dtype=bool)
        last[:-1] = gs[1:]
        path_ev, reset = c["path_ev"], f["reset"]
        state = {
            "pid": c["pid"],
            "key": c["key"],
            "ev_fid": np.where(path_ev, c["ev_fid"], f["lk"]),
            "ev_ok": np.where(path_ev, c["ev_ok"], f["ok"]),
            "ev_append": np.where(path_ev, c["ev_append"], f["app"]),
            "base": np.where(reset, c["base"], f["pos"] + c["adv"]),
            "base_ok": np.where(reset, c["base_ok"] & ~f["aw"], f["pos_ok"]),
        }
        keep = last & (state["ev_ok"] | state["base_ok"] | state["ev_append"])
        if exited:
            keep &= ~np.isin(c["pid"], exited)
        self.fds = {name: v[keep] for name, v in state.items()} if keep.any() else None

    def _drop_exited(self, exited: list[int]) -> None:
        """Forget the fd states of the pids that exited."""
        if exited and self.fds is not None:
            keep = ~np.isin(self.fds["pid"], exited)
            self.fds = {k: v[keep] for k, v in self.fds.items()} if keep.any() else None

    # ------------------------------------------------------------ the end
    def _finish(self) -> Parsed:
        """The last chunk: calls still unfinished at the end, the jobs row, warnings."""
        tables: dict[str, pa.Table] = {}
        pend = self.pend
        if pend is not None:
            # calls still unfinished when the trace ended (strace was stopped)
            self.pend = None
            order = np.argsort(pend["lineno"], kind="stable")
            q = order.size
            gid = pend["gid"][order]
            ann = [pend["ann"][j] for j in order]
            ai = np.flatnonzero((self.g_flags[gid] & _F_ARGS) != 0)
            r = {
                "pid": pend["pid"][order],
                "seq": pend["lineno"][order],
                "ts": pend["ts"][order],
                "gid": gid,
                "fd": pend["fd"][order],
                "fdok": pend["fdok"][order],
                "ann": pl.Series(ann, dtype=pl.String),
                "has_ann": np.array([v is not None for v in ann], dtype=bool),
                "ai": ai,
                "args": pl.Series([pend["args"][order[j]] for j in ai], dtype=pl.String),
                "ret": np.zeros(q, dtype=np.int64),
                "retok": np.zeros(q, dtype=bool),
                "has_err": np.zeros(q, dtype=bool),
                "err": pa.nulls(q, pa.string()),
                "rpath": pa.nulls(q, pa.string()),
                "has_rpath": np.zeros(q, dtype=bool),
                "dur": np.full(q, np.nan),
            }
            self.unresolved += q
            tables.update(self._records(r, []).tables)
        tables["jobs"] = self._jobs()
        warnings = []
        if self.fmt and not self.fmt["durations"]:
            warnings.append("strace ran without -T: t_end = t_start")
        if self.fmt and not self.fmt["fd_paths"]:
            warnings.append("strace ran without -y: the files of fds come from traced opens")
        return Parsed(tables=tables, meta=self._meta(), skips=self.skips, warnings=warnings)

    def _jobs(self) -> pa.Table:
        """The one ``jobs`` row: first pid, program, argv, pids, start/end and runtime."""
        prog = argv = None
        if self.exe is not None:
            prog, argv = _split_exe(self.exe[1] or "")
        start_us = end_us = None  # [us since 1970-01-01 UTC]
        runtime = None
        if self.t0 is not None and self.t_max is not None:
            runtime = (self.t_max - self.t0) / 1e9
            if self.fmt.get("clock") == "-ttt":
                start_us, end_us = self.t0 // 1000, self.t_max // 1000
        known_pid = self.fmt.get("prefix") != "none" or self.fmt.get("leader") is not None
        job_key = str(self.first_pid) if known_pid and self.first_pid is not None else None
        nprocs = len(self.pid_max)

        def one(value: Any, dtype: str) -> pa.Array:
            """A one-row array of ``value`` (NULL for None)."""
            return _nullable(
                np.array([0 if value is None else value], dtype=dtype),
                np.array([value is not None]),
            )

        return pa.table(
            {
                "job_id": one(0, "int64"),
                "job_key": _strings([job_key]),
                "app": _strings([posixpath.basename(prog) if prog else None]),
                "exe": _strings([argv]),
                "nprocs": one(nprocs or None, "int32"),
                "start_ts": one(start_us, "datetime64[us]"),
                "end_ts": one(end_us, "datetime64[us]"),
                "runtime_s": one(runtime, "float64"),
            }
        )

    def _meta(self, final: bool = True) -> dict[str, Any]:
        """Facts about the trace so far (format, counts, pids, files).

        Chunks' metas are merged in order, later keys winning
        (:class:`~iochar.load._base.Parsed`), so a chunk before the last
        leaves out the pid list (``final`` False): sorting every pid seen
        so far for each block cost about 1 ms a block on 2M lines.
        """
        counts = {self.names[i]: int(c) for i, c in enumerate(self.non_io) if c}
        meta = {
            "tool": "strace",
            "tool_version": None,
            "time_format": self.fmt.get("clock"),
            "pid_prefix": self.fmt.get("prefix"),
            "durations": self.fmt.get("durations"),
            "fd_paths": self.fmt.get("fd_paths"),
            "lines": self.lines,
            "calls": self.calls,
            "io_calls": self.io_calls,
            "second_rows": self.second_rows,
            "non_io_calls_total": sum(counts.values()),
            "non_io_calls": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            "signals": self.signals,
            "exits": self.exits,
            "strace_messages": self.messages,
            "unfinished_pairs": self.pairs,
            "unfinished_unresolved": self.unresolved,
            "npids": len(self.pid_max),
            "files": len(self.path2fid),
        }
        if final:
            meta["pids"] = sorted(self.pid_max)[:1000]
        return meta
