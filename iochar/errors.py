"""Exceptions and warnings raised on purpose by iochar.

Every error iochar raises deliberately derives from :class:`IocharError`.
Errors about bad bytes in an input derive from :class:`InputError`, which
also subclasses :class:`ValueError` so that existing ``except ValueError``
handlers keep working (the scikit-learn ``NotFittedError`` convention).

Messages follow the compiler convention ``path:line: expected X, got Y``::

    iostat.txt:1423: expected 14 fields for device 'sda', got 9 [kind=iostat]
"""

from __future__ import annotations

import os

__all__ = [
    "IocharError",
    "InputError",
    "UnknownKindError",
    "ParameterError",
    "SchemaError",
    "MissingDependencyError",
    "ReportError",
    "TimeParameterError",
    "DatabaseLockedError",
    "IocharWarning",
    "SkippedRecordsWarning",
]

#: At most this many characters of offending input are quoted in a message.
QUOTE_LIMIT = 80


def _quote(got: object) -> str:
    text = got.decode("utf-8", "backslashreplace") if isinstance(got, bytes) else str(got)
    text = text.rstrip("\r\n")
    if len(text) > QUOTE_LIMIT:
        text = text[: QUOTE_LIMIT - 3] + "..."
    return repr(text)


class IocharError(Exception):
    """Base class of every error iochar raises on purpose."""


class InputError(IocharError, ValueError):
    """Bad bytes in an input source.

    Parameters
    ----------
    path : str or os.PathLike or None
        The input file (``"<buffer>"`` for in-memory input).
    line : int or None
        1-based line number for text inputs, or record index for binary
        inputs (see ``unit``). ``None`` when the problem concerns the whole
        file (for example an empty file).
    expected : str
        What the parser expected at that place.
    got : object, optional
        What it found instead; at most 80 characters are quoted.
    kind : str, optional
        The input kind being parsed (``"strace"``, ``"trace-csv"``...).
    unit : {"line", "record", "byte"}, default "line"
        What ``line`` counts; binary formats use ``"record"``.

    Attributes
    ----------
    path, line, expected, got, kind, unit
        The parameters, kept for programmatic use.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        line: int | None,
        expected: str,
        got: object = None,
        *,
        kind: str | None = None,
        unit: str = "line",
    ) -> None:
        self.path = os.fspath(path) if path is not None else "<input>"
        self.line = line
        self.expected = expected
        self.got = got
        self.kind = kind
        self.unit = unit
        super().__init__(self._message())

    def _message(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}" if self.unit == "line" else f": {self.unit} {self.line}"
        msg = f"{where}: expected {self.expected}"
        if self.got is not None:
            msg += f", got {_quote(self.got)}"
        if self.kind:
            msg += f" [kind={self.kind}]"
        return msg

    def __reduce__(self):  # keep pickling (multiprocessing, pytest-xdist) working
        return (
            _rebuild_input_error,
            (type(self), self.path, self.line, self.expected, self.got, self.kind, self.unit),
        )


def _rebuild_input_error(cls, path, line, expected, got, kind, unit):
    return cls(path, line, expected, got, kind=kind, unit=unit)


class UnknownKindError(InputError):
    """No loader recognised the input; lists the kinds tried.

    Parameters
    ----------
    path : str or os.PathLike
        The input file.
    tried : sequence of str
        The kinds whose sniffers were asked.
    """

    def __init__(self, path, tried, *, got: object = None) -> None:
        self.tried = tuple(tried)
        super().__init__(
            path,
            None,
            "one of the known input kinds ("
            + ", ".join(self.tried)
            + "); name one with kind=... or --kind",
            got,
        )

    def __reduce__(self):
        return (type(self), (self.path, self.tried), {"got": self.got})

    def __setstate__(self, state):
        self.got = state.get("got")


class ParameterError(IocharError, ValueError):
    """A function argument is out of its allowed range.

    The message uses one fixed sentence, as scikit-learn does:
    ``The 'name' parameter of caller must be constraint. Got value instead.``

    Parameters
    ----------
    name : str
        Parameter name.
    caller : str
        Qualified name of the function or method.
    constraint : str
        What is allowed, in words.
    value : object
        The value that was given.
    """

    def __init__(self, name: str, caller: str, constraint: str, value: object) -> None:
        self.name, self.caller, self.constraint, self.value = name, caller, constraint, value
        super().__init__(
            f"The {name!r} parameter of {caller} must be {constraint}. Got {value!r} instead."
        )

    def __reduce__(self):
        return (type(self), (self.name, self.caller, self.constraint, self.value))


class SchemaError(IocharError):
    """A loader produced a frame that breaks the table contract (a loader bug)."""


class MissingDependencyError(IocharError, ImportError):
    """An optional dependency is missing; the message names the pip extra.

    Parameters
    ----------
    package : str
        The import name that failed.
    extra : str
        The iochar extra that installs it (``pip install 'iochar[extra]'``).
    purpose : str
        What it is needed for.
    """

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package, self.extra, self.purpose = package, extra, purpose
        super().__init__(
            f"{purpose} needs the {package!r} package; install it with "
            f"pip install 'iochar[{extra}]'"
        )

    def __reduce__(self):
        return (type(self), (self.package, self.extra, self.purpose))


class DatabaseLockedError(IocharError):
    """Another process holds the database file's lock, and waiting did not help.

    DuckDB lets one process write a file, or several read it, never both at once.
    iochar retries opening for ``wait`` seconds (``iochar ... --wait SECONDS``,
    ``iochar.connect(path, wait=...)``, ``$IOCHAR_WAIT``; default 5) before raising
    this. The message is one line: the database, the process DuckDB names as the
    holder, how long iochar waited, and what to do::

        database '/data/iochar.duckdb' is locked by another process (PID 4242,
        python3.11); still locked after 5 s. Close that program (for a notebook:
        shut its kernel down) or retry with a longer --wait SECONDS

    Parameters
    ----------
    path : str
        The database file.
    pid : int, optional
        Process id of the holder, when DuckDB's message names one.
    program : str, optional
        The holder's executable, when DuckDB's message names one.
    waited : float, default 0.0
        Seconds spent retrying. [s]
    retry : str, default "retry with a longer wait=SECONDS"
        The last clause: how to wait longer where the error is shown.
    holder_writes : bool, default False
        True when a read-only open was refused, so the holder is writing (a load):
        the advice is then to let it finish rather than to close it.

    Attributes
    ----------
    path, pid, program, waited, retry, holder_writes
        The parameters, kept for programmatic use.
    """

    def __init__(
        self,
        path: str,
        pid: int | None = None,
        program: str | None = None,
        waited: float = 0.0,
        retry: str = "retry with a longer wait=SECONDS",
        holder_writes: bool = False,
    ) -> None:
        self.path, self.pid, self.program, self.waited = path, pid, program, waited
        self.retry, self.holder_writes = retry, holder_writes
        holder = "another process"
        if pid is not None:
            holder += f" (PID {pid}" + (f", {os.path.basename(program)})" if program else ")")
        when = f"still locked after {waited:g} s" if waited > 0 else "gave up at once (wait 0)"
        todo = (
            "Let that program finish (a load, say)"
            if holder_writes
            else "Close that program (for a notebook: shut its kernel down)"
        )
        super().__init__(f"database {path!r} is locked by {holder}; {when}. {todo} or {retry}")

    def with_retry(self, retry: str) -> DatabaseLockedError:
        """The same error with another last clause (how to wait longer there).

        Parameters
        ----------
        retry : str
            The clause, e.g. ``"retry with a longer --wait SECONDS"``.

        Returns
        -------
        DatabaseLockedError
            A new error; raise it ``from None``.
        """
        return type(self)(self.path, self.pid, self.program, self.waited, retry, self.holder_writes)

    def __reduce__(self):
        args = (self.path, self.pid, self.program, self.waited, self.retry, self.holder_writes)
        return (type(self), args)

    def _render_traceback_(self) -> list[str]:
        # in a notebook: this one line, not a traceback (as ReportError)
        return [f"DatabaseLockedError: {self}"]


class IocharWarning(UserWarning):
    """Base class of iochar's warnings."""


class SkippedRecordsWarning(IocharWarning):
    """Tolerant loading (``strict=False``) skipped bad records; counts are in ``sources.meta``."""


class ReportError(IocharError):
    """A report cannot run on what it was given: a parameter names a job, target or
    snapshot the database does not hold, or the database lacks the tables it needs.

    The message is one line. Inside a notebook it is shown as that line alone, not a
    traceback, so the report's first output says what is wrong.
    """

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback (InteractiveShell.showtraceback).
        return [f"ReportError: {self}"]


class TimeParameterError(ParameterError, ReportError):
    """A time parameter (``start``, ``end``, ``now``) is not a date and time.

    A :class:`ParameterError` (so a :class:`ValueError`) like every bad parameter of an
    analysis, and a :class:`ReportError` as well, which the functions that notebooks
    call for their time window raised before there was one rule for times. The
    message is one line: ``start 'yesterday' is not a date and time (use ISO 8601, ...)``.

    Parameters
    ----------
    name : str
        Parameter name.
    caller : str
        Qualified name of the function or method.
    constraint : str
        What is allowed, in words (kept on the error; the message states it fixed).
    value : object
        The value that was given.
    """

    def __init__(self, name: str, caller: str, constraint: str, value: object) -> None:
        self.name, self.caller, self.constraint, self.value = name, caller, constraint, value
        Exception.__init__(
            self,
            f"{name} {value!r} is not a date and time "
            "(use ISO 8601, UTC unless an offset is given, e.g. 2018-01-28T06:00)",
        )

    def _render_traceback_(self) -> list[str]:
        return [f"TimeParameterError: {self}"]
