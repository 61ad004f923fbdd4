"""Parse many independent inputs on every core, for :meth:`iochar.Store.load_many`.

The store stays the only writer (DESIGN.md): worker processes only parse. Each
task is a run of consecutive inputs; a worker parses them, checks every frame
against the table contract (:func:`iochar.schema.check_frame`, in
:class:`iochar.store._Input`) and hands back

- the inputs' bookkeeping (kind, rows, meta, skips, the highest ids they use),
  pickled as usual — small;
- their frames as Arrow IPC streams, one per table and column set, holding the
  frames of every input of the run one after the other, with each input's
  (offset, length) in it. The parent maps the IPC bytes without copying
  (:func:`pyarrow.ipc.open_stream` over the received buffer) and slices each
  input's frames back out, so the rows cross the process boundary once, as one
  memory copy, instead of being pickled table by table (pickling an input's
  dozen small Arrow tables cost about as much as parsing it).

An input whose parse fails comes back as its :class:`~iochar.errors.IocharError`
(they pickle with their message), and the run's other inputs are unaffected.

Workers are fresh interpreters (``python -c``, this process's ``sys.path``
sent first) talking length-prefixed pickles over their stdin and stdout, not a
:mod:`multiprocessing` pool: ``fork`` is unsafe under the parent's DuckDB
threads, and ``spawn``/``forkserver`` run the caller's ``__main__`` script again
in every worker, which breaks any script that calls iochar without an
``if __name__ == "__main__"`` guard. Tasks go to the workers in turn and results
are read back in the same turn, so the order of inputs is kept without a
scheduler; a task (paths) is a few KiB, far below a pipe's buffer, so the
parent never blocks writing one while a worker waits to hand back a result.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from typing import IO, Any

import pyarrow as pa

__all__ = ["default_workers", "parse_runs"]

#: Inputs per task: large enough that the IPC framing and task dispatch
#: (about 1 ms) are small against parsing, small enough that a worker's memory
#: holds little and the writer is never left waiting long.
RUN_INPUTS = 32

#: Fewest inputs worth starting processes for: a worker costs about 0.5 s to
#: start (importing pyarrow, numpy and the loaders), about 300 small logs' parse.
MIN_INPUTS = 256


def default_workers(n_inputs: int) -> int:
    """Parse processes for ``n_inputs`` independent inputs: every core, or 1 when few.

    Parameters
    ----------
    n_inputs : int
        Inputs to parse.

    Returns
    -------
    int
        One less than the cores this process may use (``os.process_cpu_count``):
        the writing process keeps a core, and on a two-core machine one parse
        process beside it was measured no faster than a parse thread
        (``benchmarks/bench_darshan_archive.py``). 1 (parse in this process)
        when there are fewer than :data:`MIN_INPUTS` inputs.
    """
    if n_inputs < MIN_INPUTS:
        return 1
    count = getattr(os, "process_cpu_count", os.cpu_count)() or 1
    workers = count - 1
    return workers if workers >= 2 else 1


def _pack(inputs: list[Any]) -> tuple[list[tuple[str, tuple[str, ...]]], list[bytes], list]:
    """Frames of many parsed inputs -> one IPC stream per (table, columns) + slices."""
    keys: list[tuple[str, tuple[str, ...]]] = []
    index: dict[tuple[str, tuple[str, ...]], int] = {}
    parts: list[list[pa.Table]] = []
    counts: list[int] = []
    slices = []
    for inp in inputs:
        if not hasattr(inp, "frames"):
            slices.append(None)
            continue
        mine: dict[str, list[tuple[int, int, int]]] = {}
        for table, frames in inp.frames.items():
            for frame in frames:
                key = (table, tuple(frame.column_names))
                k = index.get(key)
                if k is None:
                    k = index[key] = len(keys)
                    keys.append(key)
                    parts.append([])
                    counts.append(0)
                mine.setdefault(table, []).append((k, counts[k], frame.num_rows))
                parts[k].append(frame)
                counts[k] += frame.num_rows
        inp.frames = {}
        slices.append(mine)
    streams = []
    for frames in parts:
        table = pa.concat_tables(frames, promote_options="permissive")
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        streams.append(sink.getvalue().to_pybytes())
    return keys, streams, slices


def _parse_run(items: Sequence[tuple[str, str, str, int]], kind, strict, chunk_rows):
    """Worker: parse a run of path inputs into packed frames (see the module docstring)."""
    from iochar.store import _parse_input

    inputs = [_parse_input(src, uri, digest, size, kind, strict, chunk_rows)
              for src, uri, digest, size in items]  # fmt: skip
    keys, streams, slices = _pack(inputs)
    return inputs, keys, streams, slices


def _unpack(packed) -> list[Any]:
    inputs, keys, streams, slices = packed
    tables = [pa.ipc.open_stream(pa.py_buffer(s)).read_all() for s in streams]
    for inp, mine in zip(inputs, slices, strict=True):
        if mine is None:
            continue
        inp.frames = {
            table: [tables[k].slice(off, n) for k, off, n in where] for table, where in mine.items()
        }
    del keys
    return inputs


_HEAD = struct.Struct("<Q")

_BOOT = (
    "import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
    "from iochar._parallel import _serve; _serve()"
)


def _send(fh: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HEAD.pack(len(data)))
    fh.write(data)
    fh.flush()


def _receive(fh: IO[bytes]) -> Any:
    head = fh.read(_HEAD.size)
    if len(head) < _HEAD.size:
        raise EOFError
    (n,) = _HEAD.unpack(head)
    data = fh.read(n)
    if len(data) < n:
        raise EOFError
    return pickle.loads(data)


def _serve() -> None:
    """Worker loop: read a task, answer it, until stdin closes."""
    rd, wr = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers on the answer pipe
    while True:
        try:
            task = _receive(rd)
        except EOFError:
            return
        _send(wr, _parse_run(*task))


class _WorkerDied(Exception):
    """A worker exited before answering (killed, out of memory, a crash in C code)."""

    def __init__(self, pid: int, status: int) -> None:
        super().__init__(pid, status)
        self.pid, self.status = pid, status


class _Workers:
    """``n`` worker interpreters; closing stops them (stdin closed, then killed)."""

    def __init__(self, n: int) -> None:
        self.procs: list[subprocess.Popen] = []
        try:
            for _ in range(n):
                proc = subprocess.Popen(
                    [sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
                )
                self.procs.append(proc)
                pickle.dump(list(sys.path), proc.stdin)  # read by _BOOT, unframed
                proc.stdin.flush()
        except BaseException:
            self.close()
            raise

    def submit(self, k: int, task: tuple) -> None:
        proc = self.procs[k % len(self.procs)]
        try:
            _send(proc.stdin, task)
        except (BrokenPipeError, OSError):
            pass  # it died; result(k) says so

    def result(self, k: int) -> Any:
        proc = self.procs[k % len(self.procs)]
        try:
            return _receive(proc.stdout)
        except EOFError:
            raise _WorkerDied(proc.pid, proc.wait()) from None

    def close(self) -> None:
        for proc in self.procs:
            try:
                proc.stdin.close()
            except OSError:
                pass
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()


def _died(item: tuple[str, str, str, int], kind: str | None, status: int):
    from iochar.errors import InputError

    how = f"signal {-status}" if status < 0 else f"status {status}"
    return InputError(
        item[1],
        None,
        f"an input the parser survives (its process ended with {how} on this input, twice)",
        kind=kind,
    )


def parse_runs(
    items: Sequence[tuple[Any, str, str, int]],
    *,
    kind: str | None,
    strict: bool,
    chunk_rows: int,
    workers: int,
    run_inputs: int = RUN_INPUTS,
) -> Iterator[Any]:
    """Parse path inputs in ``workers`` processes; yield their results in order.

    Parameters
    ----------
    items : sequence of (path, uri, sha256, size)
        The inputs, already hashed.
    kind, strict, chunk_rows
        As for :meth:`iochar.Store.load`.
    workers : int
        Processes (>= 2).
    run_inputs : int, default RUN_INPUTS
        Inputs per task.

    Yields
    ------
    iochar.store._Input or IocharError
        One per item, in order: the parsed input, or the error it failed with.

    Notes
    -----
    At most two tasks per worker are in flight, so memory holds about
    ``2 * workers * run_inputs`` parsed inputs whatever the number of items.

    A worker that dies (``kill -9``, the out-of-memory killer, a crash in
    libdarshan-util's C code on a corrupt log) loses nothing: the workers are
    started again, the run it held is parsed again one input per task, and the
    runs queued behind it follow. An input whose own task kills its worker is
    the cause; it is reported as an :class:`~iochar.errors.InputError` and the
    others land. Closing the generator early (an exception in the consumer)
    stops the workers.
    """
    # (run, tried): tried says a one-input run already lost a worker once
    queue: deque[tuple[list[tuple[str, str, str, int]], bool]] = deque(
        (
            [(os.fspath(s), u, d, n) for s, u, d, n in items[at : at + run_inputs]],
            False,
        )
        for at in range(0, len(items), run_inputs)
    )
    while queue:
        pool = _Workers(min(workers, len(queue)))
        flight: deque[tuple[int, tuple[list, bool]]] = deque()
        sent = 0

        def send(pool: _Workers = pool, flight: deque = flight) -> None:
            nonlocal sent
            entry = queue.popleft()
            pool.submit(sent, (entry[0], kind, strict, chunk_rows))
            flight.append((sent, entry))
            sent += 1

        try:
            while queue and len(flight) < 2 * len(pool.procs):
                send()
            while flight:
                k, (run, tried) = flight.popleft()
                try:
                    packed = pool.result(k)
                except _WorkerDied as dead:
                    back = [entry for _, entry in flight]
                    if len(run) > 1:
                        back = [([item], False) for item in run] + back
                    elif not tried:
                        back = [(run, True), *back]
                    else:
                        yield _died(run[0], kind, dead.status)
                    queue.extendleft(reversed(back))
                    break  # start the workers again
                if queue:
                    send()
                yield from _unpack(packed)
        finally:
            pool.close()
