"""Why a database file cannot be opened, in one line naming the file, the cause and what to do.

DuckDB reports a held lock, a file that is not a database, a truncated file, a checksum failure and a
missing permission all as errors of a few classes; the message says which, and so says ours.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from service.errors import StoreHeld, StoreUnavailable

__all__ = ["open_error"]

_ELSEWHERE: Final = "or point --db / GPUPLAN_DB at another file"
_RESTORE: Final = f"restore it from a backup, move it aside to start afresh, {_ELSEWHERE}"
_HELD_BY: Final = re.compile(
    r"Could not set lock on file(?:.*?held in (?P<program>.+?) \(PID (?P<pid>\d+)\))?", re.S
)
"""DuckDB's words for a file another process holds: ``… Conflicting lock is held in PROGRAM (PID N)``."""
_CAUSES: Final = (
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


def _held(path: str, found: re.Match[str]) -> StoreHeld:
    """The file is locked by another process: name it (its PID and program, when DuckDB says) and the
    ways out. A running ``gpuplan serve`` is the usual holder; the CLI can ask it instead."""
    pid = int(found["pid"]) if found["pid"] else None
    who = f"process {pid} ({Path(found['program']).name})" if pid is not None else "another process"
    return StoreHeld(
        f"cannot open the database {path!r}: {who} holds it (DuckDB lets one process open a file, and "
        "refuses even read-only opens meanwhile). If it is a gpuplan server, ask it with "
        "--url http://HOST:PORT (the CLI asks the server at GPUPLAN_HOST:GPUPLAN_PORT by itself when it "
        f"answers); otherwise stop process {pid if pid is not None else 'that process'}, {_ELSEWHERE}.",
        pid=pid,
    )


def open_error(path: str, exc: BaseException) -> StoreUnavailable:
    """The 503 to raise when opening ``path`` failed with ``exc`` (a DuckDB or OS error); a held lock
    is a ``StoreHeld`` naming the holder."""
    text = str(exc)
    held = _HELD_BY.search(text)
    if held:
        return _held(path, held)
    for pattern, cause in _CAUSES:
        if pattern.search(text):
            return StoreUnavailable(f"cannot open the database {path!r}: {cause}.")
    return StoreUnavailable(f"cannot open the database {path!r}: {type(exc).__name__}: {text}.")
