"""Pause CPython's cyclic garbage collector while a large sheet is read and parsed.

Reading 300,000 rows allocates millions of short-lived lists and tuples (the CSV reader's rows, zipped
cells); each burst triggers full collections that walk every tracked object of the process, a second
of a few-second import. Nothing a sheet read creates forms a reference cycle (plain reference counting
frees it), so collection waits until the read is over. The collector is process-wide: it is turned
back on only by the pause that turned it off, so overlapping imports in two threads never leave it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collection_paused"]


@contextmanager
def collection_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (if it was on)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
