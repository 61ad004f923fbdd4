"""Write a large DXT_POSIX Darshan log with libdarshan-util's own writer.

The Darshan runtime is not available here, so the benchmark makes its big log
the way ``tests/load/test_darshan.py`` makes its small ones: the record bytes
are built with numpy and handed to libdarshan-util's log writer
(``darshan_log_create`` / ``put_job`` / ``put_exe`` / ``put_mounts`` /
``put_namehash`` / ``put_mod`` / ``close``, the functions ``darshan-convert``
uses), so the result is a genuine format-3.41 zlib log that both pydarshan and
iochar read back through the library.

The job: ``ranks`` MPI ranks on ``ranks // 16`` nodes, each writing then reading
back its own ``files`` files (file per process) under a Lustre mount. Each
(rank, file) pair has one POSIX record and one DXT_POSIX record; the POSIX
counters (operation counts, bytes, max byte, access-size histogram, common
access sizes, timestamps and cumulative times) agree with the DXT segments,
and every record id has a name record. The segments (``segments`` in all,
spread evenly over the records, the first half of each record's writes, the
rest reads) are sequential accesses of mixed sizes (4 KiB to 4 MiB, aligned
to 4 KiB), timed at a few hundred MB/s per rank.

    from _darshan_writer import write_dxt_log
    info = write_dxt_log(path, 1_000_000)
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

# libdarshan-util's writer through cffi: one copy, in the library
from iochar.datasets.synth_jobs import _check, _library, _record_id

#: ``struct darshan_posix_file``: base record, 69 counters, 17 float counters
#: (POSIX module version 4, darshan 3.4); checked against pydarshan's names.
POSIX_REC = np.dtype([("id", "<u8"), ("rank", "<i8"), ("c", "<i8", 69), ("f", "<f8", 17)])
POSIX_VER = 4
DXT_POSIX_VER = 1
#: ``struct dxt_file_record`` (id, rank, shared flag, hostname[64], write and
#: read counts) and ``struct segment_info`` (offset, length, start, end).
DXT_HEAD = np.dtype(
    [("id", "<u8"), ("rank", "<i8"), ("shared", "<i8"), ("host", "S64")]
    + [("nw", "<i8"), ("nr", "<i8")]
)
SEGMENT = np.dtype([("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])
#: Darshan's access-size bins: upper bounds (inclusive) of all but the last.
SIZE_BINS = [100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30]
SIZE_NAMES = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
              "10M_100M", "100M_1G", "1G_PLUS"]  # fmt: skip


def _segments(segments: int, nrec: int, ranks: int, files: int, seed: int):
    """Per-record write/read counts and the segments, in log order
    (record after record; in a record, writes then reads)."""
    rng = np.random.default_rng(seed)
    per = np.full(nrec, segments // nrec, np.int64)
    per[: segments % nrec] += 1
    nw = (per + 1) // 2
    nr = per - nw
    rec = np.repeat(np.arange(nrec), per)  # record of each segment
    first = np.concatenate([[0], np.cumsum(per)[:-1]])
    idx = np.arange(segments) - first[rec]  # index within the record
    is_read = idx >= nw[rec]
    sizes = rng.choice([4096, 65536, 1 << 20, 4 << 20], segments, p=[0.2, 0.3, 0.4, 0.1])
    # writes go sequentially from offset 0; reads read the file back from 0
    phase_key = rec * 2 + is_read
    csum = np.cumsum(sizes)
    phase_first = np.flatnonzero(np.r_[True, phase_key[1:] != phase_key[:-1]])
    phase_of = np.cumsum(np.r_[True, phase_key[1:] != phase_key[:-1]]) - 1
    offset = csum - sizes - (csum - sizes)[phase_first][phase_of]
    # each rank writes its files one after another, then reads them back: lay
    # the segments out in that time order and accumulate durations per rank
    rank = rec // files
    file = rec % files
    dur = sizes / rng.uniform(2e8, 6e8, segments) + rng.exponential(2e-5, segments)
    gap = rng.exponential(5e-5, segments)
    order = np.lexsort((idx, file, is_read, rank))
    step = (dur + gap)[order]
    t_end = np.cumsum(step)
    rank_o = rank[order]
    rank_first = np.flatnonzero(np.r_[True, rank_o[1:] != rank_o[:-1]])
    rank_of = np.cumsum(np.r_[True, rank_o[1:] != rank_o[:-1]]) - 1
    t_end = t_end - (t_end - step)[rank_first][rank_of]  # restart at each rank
    t_end += 0.5 + rng.uniform(0, 0.05, ranks)[rank_o]  # MPI_Init, file opens
    seg = np.empty(segments, SEGMENT)
    seg["offset"], seg["length"] = offset, sizes
    seg["end"][order] = t_end
    seg["start"] = seg["end"] - dur
    return per, nw, nr, rec, is_read, seg


def _posix_records(ids, ranks_of, per, nw, nr, rec, is_read, seg) -> np.ndarray:
    """POSIX records agreeing with the DXT segments of the same (rank, file)."""
    from darshan.backend.cffi_backend import counter_names, fcounter_names

    cn, fn = counter_names("POSIX"), fcounter_names("POSIX")
    if len(cn) != POSIX_REC["c"].shape[0] or len(fn) != POSIX_REC["f"].shape[0]:
        raise RuntimeError("this darshan's POSIX record layout differs from the one written")
    c = {name: i for i, name in enumerate(cn)}
    f = {name: i for i, name in enumerate(fn)}
    nrec = len(ids)
    out = np.zeros(nrec, POSIX_REC)
    out["id"], out["rank"] = ids, ranks_of
    cc, ff = out["c"], out["f"]
    size, t0, t1 = seg["length"], seg["start"], seg["end"]
    dur = t1 - t0
    last = seg["offset"] + size - 1
    for op, done, mask, n in (("READ", "READ", is_read, nr), ("WRITE", "WRITTEN", ~is_read, nw)):
        r, s = rec[mask], size[mask]
        cc[:, c[f"POSIX_{op}S"]] = n
        cc[:, c[f"POSIX_BYTES_{done}"]] = np.bincount(r, s, nrec)
        mx = np.zeros(nrec, np.int64)
        np.maximum.at(mx, r, last[mask])
        cc[:, c[f"POSIX_MAX_BYTE_{done}"]] = mx
        cc[:, c[f"POSIX_CONSEC_{op}S"]] = np.maximum(n - 1, 0)
        cc[:, c[f"POSIX_SEQ_{op}S"]] = np.maximum(n - 1, 0)
        b = np.searchsorted(SIZE_BINS, s, side="left")
        hist = np.bincount(r * len(SIZE_NAMES) + b, minlength=nrec * len(SIZE_NAMES))
        lo = c[f"POSIX_SIZE_{op}_0_100"]
        cc[:, lo : lo + len(SIZE_NAMES)] = hist.reshape(nrec, len(SIZE_NAMES))
        start = np.full(nrec, np.inf)
        np.minimum.at(start, r, t0[mask])
        end = np.zeros(nrec)
        np.maximum.at(end, r, t1[mask])
        ff[:, f[f"POSIX_F_{op}_START_TIMESTAMP"]] = np.where(n > 0, start, 0)
        ff[:, f[f"POSIX_F_{op}_END_TIMESTAMP"]] = end
        ff[:, f[f"POSIX_F_{op}_TIME"]] = np.bincount(r, dur[mask], nrec)
        slow = np.zeros(nrec)
        np.maximum.at(slow, r, dur[mask])
        ff[:, f[f"POSIX_F_MAX_{op}_TIME"]] = slow
        # the size of the slowest operation: the first one reaching the max
        hit = np.flatnonzero(dur[mask] == slow[r])
        at = np.zeros(nrec, np.int64)
        at[r[hit[::-1]]] = s[hit[::-1]]
        cc[:, c[f"POSIX_MAX_{op}_TIME_SIZE"]] = at
    cc[:, c["POSIX_OPENS"]] = (nw > 0).astype(np.int64) + (nr > 0)
    cc[:, c["POSIX_SEEKS"]] = nr > 0  # back to offset 0 before reading
    cc[:, c["POSIX_FSYNCS"]] = nw > 0
    cc[:, c["POSIX_RW_SWITCHES"]] = (nw > 0) & (nr > 0)
    cc[:, c["POSIX_MODE"]] = 0o644
    cc[:, c["POSIX_MEM_ALIGNMENT"]] = 8
    cc[:, c["POSIX_FILE_ALIGNMENT"]] = 1 << 20  # Lustre stripe size
    cc[:, c["POSIX_FILE_NOT_ALIGNED"]] = np.bincount(rec, seg["offset"] % (1 << 20) != 0, nrec)
    # the four most common access sizes of each record
    keys, counts = np.unique(rec.astype(np.int64) << 40 | size, return_counts=True)
    krec, ksize = keys >> 40, keys & ((1 << 40) - 1)
    order = np.lexsort((-counts, krec))
    krec, ksize, counts = krec[order], ksize[order], counts[order]
    rank_in = np.arange(len(krec)) - np.searchsorted(krec, krec)
    top = rank_in < 4
    a, ac = c["POSIX_ACCESS1_ACCESS"], c["POSIX_ACCESS1_COUNT"]
    cc[krec[top], a + rank_in[top]] = ksize[top]
    cc[krec[top], ac + rank_in[top]] = counts[top]
    # opens just before the first operation, closes just after the last
    first_t = np.full(nrec, np.inf)
    np.minimum.at(first_t, rec, t0)
    last_t = np.zeros(nrec)
    np.maximum.at(last_t, rec, t1)
    first_t[per == 0], last_t[per == 0] = 0.5, 0.5  # opened and closed only
    ff[:, f["POSIX_F_OPEN_START_TIMESTAMP"]] = first_t - 2e-4
    ff[:, f["POSIX_F_OPEN_END_TIMESTAMP"]] = first_t - 1e-4
    ff[:, f["POSIX_F_CLOSE_START_TIMESTAMP"]] = last_t + 1e-4
    ff[:, f["POSIX_F_CLOSE_END_TIMESTAMP"]] = last_t + 2e-4
    ff[:, f["POSIX_F_META_TIME"]] = 2e-4 * cc[:, c["POSIX_OPENS"]] + 1e-4
    return out


def write_dxt_log(
    path: str | os.PathLike, segments: int, *, ranks: int = 64, files: int = 32, seed: int = 0
) -> dict:
    """Write a format-3.41 log of ``ranks * files`` POSIX and DXT_POSIX records
    holding ``segments`` DXT segments in all; return a summary of it.

    ``path`` must not exist (libdarshan-util creates it exclusively).
    """
    nrec = ranks * files
    if segments < 1:
        raise ValueError("segments must be >= 1")
    ffi, lib = _library()
    from darshan.backend.cffi_backend import _mod_names

    per, nw, nr, rec, is_read, seg = _segments(segments, nrec, ranks, files, seed)
    ranks_of = np.arange(nrec) // files
    names = [
        f"/scratch/ckpt/rank{r:04d}/part{i:03d}.dat" for r in range(ranks) for i in range(files)
    ]
    ids = np.array([_record_id(p) for p in names], np.uint64)
    nodes = max(1, -(-ranks // 16))
    hosts = np.array([f"nid{r // 16:05d}".encode() for r in range(ranks)])

    heads = np.zeros(nrec, DXT_HEAD)
    heads["id"], heads["rank"], heads["host"] = ids, ranks_of, hosts[ranks_of]
    heads["nw"], heads["nr"] = nw, nr
    raw_heads = heads.tobytes()
    raw_segs = memoryview(seg.tobytes())
    bounds = np.concatenate([[0], np.cumsum(per)]) * SEGMENT.itemsize
    dxt = b"".join(
        raw_heads[i * DXT_HEAD.itemsize : (i + 1) * DXT_HEAD.itemsize]
        + raw_segs[bounds[i] : bounds[i + 1]]
        for i in range(nrec)
    )
    posix = _posix_records(ids, ranks_of, per, nw, nr, rec, is_read, seg).tobytes()
    runtime = float(seg["end"].max()) + 1.5  # + writing the log in MPI_Finalize

    fd = lib.darshan_log_create(os.fsencode(path), 0, 0)  # zlib, not partial
    if fd == ffi.NULL:
        raise RuntimeError(f"darshan_log_create failed for {path}")
    try:
        job = ffi.new("struct darshan_job *")
        job.uid, job.nprocs, job.jobid = 4242, ranks, 8675309
        job.start_time_sec, job.start_time_nsec = 1_700_000_000, 125_000_000
        end_ns = 125_000_000 + round(runtime * 1e9)
        job.end_time_sec = 1_700_000_000 + end_ns // 1_000_000_000
        job.end_time_nsec = end_ns % 1_000_000_000
        job.metadata = b"lib_ver=3.4.4\nh=romio_no_indep_rw=true;cb_nodes=4\n"
        _check(lib.darshan_log_put_job(fd, job), "put_job")
        exe = f"/home/user/bin/ckpt_app --ranks {ranks} --files {files} --restart"
        _check(lib.darshan_log_put_exe(fd, exe.encode()), "put_exe")
        mounts = [(b"lustre", b"/scratch"), (b"nfs", b"/home"), (b"xfs", b"/")]
        mnt = ffi.new("struct darshan_mnt_info[]", len(mounts))
        for i, (kind, where) in enumerate(mounts):
            mnt[i].mnt_type, mnt[i].mnt_path = kind, where
        _check(lib.darshan_log_put_mounts(fd, mnt, len(mounts)), "put_mounts")
        # a uthash table as darshan_log_put_namehash walks it: HASH_ITER only
        # follows hlink.next from one ref to the next
        keep = []
        refs = ffi.new("struct darshan_name_record_ref[]", nrec)
        for i, (rid, name) in enumerate(zip(ids.tolist(), names, strict=True)):
            buf = ffi.new("char[]", int(rid).to_bytes(8, "little") + name.encode() + b"\0")
            keep.append(buf)
            refs[i].name_record = buf
            refs[i].hlink.next = ffi.addressof(refs, i + 1) if i + 1 < nrec else ffi.NULL
        _check(lib.darshan_log_put_namehash(fd, refs), "put_namehash")
        for module, buf, ver in (("POSIX", posix, POSIX_VER), ("DXT_POSIX", dxt, DXT_POSIX_VER)):
            mod_id = _mod_names.index(module)
            _check(lib.darshan_log_put_mod(fd, mod_id, buf, len(buf), ver), f"put_mod {module}")
    finally:
        lib.darshan_log_close(fd)
    return {
        "path": Path(path),
        "segments": segments,
        "ranks": ranks,
        "files": files,
        "records": nrec,
        "nodes": nodes,
        "writes": int(nw.sum()),
        "reads": int(nr.sum()),
        "bytes": int(seg["length"].sum()),
        "size": os.path.getsize(path),
    }
