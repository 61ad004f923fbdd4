"""Scanning blocks on worker threads, in order, with the consumer helping out.

:class:`Scans` runs a pure function over a sequence of jobs (the blocks of a
trace) on worker threads and hands the results back in input order. When
the consumer needs a result that is not ready, it does not just wait: it
runs the job itself if no worker has started it, and otherwise runs the
oldest job nobody has started yet (work stealing, as in Blumofe & Leiserson,
"Scheduling multithreaded computations by work stealing", J. ACM 46(5),
1999). So the work splits by how fast each thread really is: on an idle
machine the workers scan while the consumer runs the ordered pass, and when
a worker's core is taken by another process the consumer scans the blocks
that worker would have been late with. Results never depend on who ran a
job.

At most ``depth`` jobs are queued or done but not yet taken, which bounds
memory by that many blocks.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

_PENDING, _RUNNING, _DONE = range(3)


class _Job:
    __slots__ = ("args", "state", "result", "error", "done")

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args
        self.state = _PENDING
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()


class Scans:
    """Run ``fn(*args)`` for each :meth:`put` job on ``workers`` threads; :meth:`take` in order.

    Parameters
    ----------
    fn : callable
        A pure function (it must not touch state the consumer changes).
    workers : int
        Worker threads (>= 1).
    """

    def __init__(self, fn: Callable[..., Any], workers: int) -> None:
        self._fn = fn
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._order: collections.deque[_Job] = collections.deque()  # not yet taken
        self._pending: collections.deque[_Job] = collections.deque()  # not yet started
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"iochar-strace-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def __len__(self) -> int:
        """Jobs put and not yet taken."""
        return len(self._order)

    def put(self, *args: Any) -> None:
        """Queue a job."""
        job = _Job(args)
        with self._lock:
            self._order.append(job)
            self._pending.append(job)
            self._wake.notify()

    def take(self) -> Any:
        """The oldest job's result (raising its exception), helping with the work meanwhile."""
        job = self._order.popleft()
        while True:
            with self._lock:
                if job.state == _PENDING:
                    self._pending.remove(job)
                    job.state = _RUNNING
                    mine = job
                elif job.state == _DONE:
                    mine = None
                elif self._pending:  # a worker has it: scan the next one meanwhile
                    mine = self._pending.popleft()
                    mine.state = _RUNNING
                else:
                    mine = None
            if mine is not None:
                self._run(mine)
                if mine is job:
                    break
                continue
            job.done.wait()
            break
        job.args = ()
        if job.error is not None:
            raise job.error
        result, job.result = job.result, None
        return result

    def close(self) -> None:
        """Drop the jobs not started and stop the workers (after their current job)."""
        with self._lock:
            self._closed = True
            self._pending.clear()
            self._order.clear()
            self._wake.notify_all()
        for t in self._threads:
            t.join()

    def _run(self, job: _Job) -> None:
        try:
            job.result = self._fn(*job.args)
        except BaseException as exc:  # handed to the consumer by take()
            job.error = exc
        with self._lock:
            job.state = _DONE
        job.done.set()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                job = self._pending.popleft()
                job.state = _RUNNING
            self._run(job)
