"""The software compatibility table shipped with the catalog (``service/data/software_support.csv``).

It is package data, not a price sheet: read once per process (no database table, no migration), and
indexed against each catalog snapshot's GPUs once (:data:`SOFTWARE_INDEX`). Columns and sources are
explained in ``service/data/README-software_support.md``.
"""

from __future__ import annotations

import csv
import functools
import io

from service.db.seed_files import seed_file_text
from service.db.snapshot import Derived
from service.errors import ServiceError
from solver import ARCHITECTURE_NAMES, REQUIREMENTS, VENDOR_STACK, SoftwareIndex, SupportRow, SupportTable

__all__ = ["SOFTWARE_FILE", "SOFTWARE_INDEX", "parse_support_rows", "support_table"]

SOFTWARE_FILE = "software_support.csv"
_COLUMNS = ("requirement", "vendor", "architecture", "min_version", "note", "source")


def parse_support_rows(text: str) -> list[SupportRow]:
    """The table's rows; a malformed row is a broken release, so it raises (naming the line)."""
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != _COLUMNS:
        raise ServiceError(f"{SOFTWARE_FILE}: columns must be {', '.join(_COLUMNS)}")
    rows = []
    for line, raw in enumerate(reader, start=2):
        row = SupportRow(**{name: (raw.get(name) or "").strip() for name in _COLUMNS})
        problem = _problem(row)
        if problem:
            raise ServiceError(f"{SOFTWARE_FILE} line {line}: {problem}")
        rows.append(row)
    return rows


def _problem(row: SupportRow) -> str:
    if row.requirement not in REQUIREMENTS:
        return f"unknown requirement {row.requirement!r}"
    if row.vendor not in VENDOR_STACK:
        return f"unknown vendor {row.vendor!r}"
    if row.architecture not in ARCHITECTURE_NAMES:
        return f"unknown architecture {row.architecture!r}"
    if not row.source.startswith("https://"):
        return "every row needs its source (an https URL)"
    return ""


@functools.cache
def support_table() -> SupportTable:
    """The shipped table, read once per process."""
    return SupportTable(parse_support_rows(seed_file_text(SOFTWARE_FILE)))


SOFTWARE_INDEX: Derived[SoftwareIndex] = Derived(
    "software support by GPU", lambda snapshot: SoftwareIndex(support_table(), snapshot.gpus)
)
