"""Why a database file cannot be opened, in one line naming the file, the cause and what to do.

DuckDB reports a held lock, a file that is not a database, a truncated file, a checksum failure and a
missing permission all as errors of a few classes; the message says which, and so says ours.
"""

from __future__ import annotations

import re
from typing import Final

from service.errors import StoreHeld, StoreUnavailable

__all__ = ["open_error"]

_ELSEWHERE: Final = "or point --db / GPUPLAN_DB at another file"
_RESTORE: Final = f"restore it from a backup, move it aside to start afresh, {_ELSEWHERE}"
_CAUSES: Final = (
    (
        re.compile(r"Could not set lock on file.*?(PID \d+)?\)?\.", re.S),
        "another process{pid} holds it (a running gpuplan server?); stop that process " + _ELSEWHERE,
    ),
    (
        re.compile(r"not a valid DuckDB database file"),
        "it is not a DuckDB database (empty or another kind of file); " + _RESTORE,
    ),
    (
        re.compile(r"Could not read enough bytes"),
        "the file is truncated (shorter than its own header says); " + _RESTORE,
    ),
    (
        re.compile(r"[Cc]orrupt|checksum"),
        "the file is corrupt (a block's checksum does not match); " + _RESTORE,
    ),
    (
        re.compile(r"Is a directory"),
        "the path is a directory, not a file; point --db / GPUPLAN_DB at a file in it",
    ),
    (
        re.compile(r"Permission denied|Read-only file system"),
        "no permission to open it for reading and writing (check the owner and mode of the file and its folder)",
    ),
    (
        re.compile(r"Not a directory"),
        "a part of its folder path is a file, not a folder; " + _ELSEWHERE,
    ),
    (
        re.compile(r"No such file or directory"),
        "its folder does not exist or cannot be created; " + _ELSEWHERE,
    ),
    (
        re.compile(r"newer version|older version|version number"),
        "it was written by another DuckDB version; open it with that version and export it, " + _ELSEWHERE,
    ),
)


_HELD: Final = 0
"""The index in ``_CAUSES`` of a lock held by another process."""


def open_error(path: str, exc: BaseException) -> StoreUnavailable:
    """The 503 to raise when opening ``path`` failed with ``exc`` (a DuckDB or OS error); a held lock
    is a ``StoreHeld``."""
    text = str(exc)
    for index, (pattern, cause) in enumerate(_CAUSES):
        found = pattern.search(text)
        if found:
            pid = found.group(1) if found.groups() and found.group(1) else None
            reason = cause.format(pid=f" ({pid})" if pid else "")
            error = StoreHeld if index == _HELD else StoreUnavailable
            return error(f"cannot open the database {path!r}: {reason}.")
    return StoreUnavailable(f"cannot open the database {path!r}: {type(exc).__name__}: {text}.")
