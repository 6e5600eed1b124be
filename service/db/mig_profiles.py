"""The MIG profiles shipped in ``service/data/mig_profiles.csv``, read once per process.

They are package data, not a table: NVIDIA's profile tables change with new GPUs, not with price
sheets, so the snapshot derives the slices of the catalog's GPUs from this file (no migration). The
facts and their source are described in ``service/data/README-mig_profiles.md``.
"""

from __future__ import annotations

import csv
import functools
import io
from importlib import resources

from solver import MigProfile, gpu_id_for

__all__ = ["MIG_PROFILES_FILE", "read_mig_profiles"]

MIG_PROFILES_FILE = "mig_profiles.csv"
_INTS = (
    "compute_slices",
    "compute_slices_total",
    "memory_slices",
    "memory_slices_total",
    "max_count",
)


def _profile(line: int, row: dict[str, str]) -> MigProfile:
    try:
        numbers = {name: int(row[name]) for name in _INTS}
        memory = float(row["memory_gib"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{MIG_PROFILES_FILE} line {line}: {exc}") from None
    fractions_ok = (
        0 < numbers["compute_slices"] <= numbers["compute_slices_total"]
        and 0 < numbers["memory_slices"] <= numbers["memory_slices_total"]
        and numbers["max_count"] >= 1
        and memory > 0
    )
    if not fractions_ok:
        raise ValueError(f"{MIG_PROFILES_FILE} line {line}: slices, count or memory out of range")
    return MigProfile(
        gpu_id=gpu_id_for(row["gpu"]),
        profile=row["profile"].strip(),
        memory_gib=memory,
        source=row["source"],
        **numbers,
    )


@functools.cache
def read_mig_profiles() -> tuple[MigProfile, ...]:
    """Every shipped profile (a bad row is a packaging error, so it raises ``ValueError``)."""
    text = resources.files("service").joinpath("data", MIG_PROFILES_FILE).read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO(text))
    return tuple(_profile(line, row) for line, row in enumerate(rows, start=2))
