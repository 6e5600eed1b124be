"""Load the shipped seed data into the store: once, idempotently, in one transaction.

The GPU catalog, aliases and profiles are reference data: they are replaced whole when the shipped
files change. Prices become sheet versions of the ``seed`` source, so a restart adds nothing and a
changed shipped sheet adds one version, keeping history.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime

import duckdb
import msgspec

from service.bulk import insert_rows
from service.seed_files import SEED_FILES, SeedCatalog, read_seed_catalog, seed_file_text
from service.sheet_versions import add_ownership_version, add_rental_version

__all__ = ["SEED_SOURCE", "SeedReport", "ensure_seeded", "seed_fingerprint"]

SEED_SOURCE = "seed"
_LOADER_VERSION = "1"  # bump when parsing changes, so existing databases reload the seed
_log = logging.getLogger("gpuplan.seed")


class SeedReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a seeding pass did."""

    loaded: bool
    fingerprint: str
    rental_version: int | None = None
    ownership_version: int | None = None
    unusable_rows: int = 0


def seed_fingerprint() -> str:
    """A hash of every shipped data file and the loader version."""
    digest = hashlib.sha256(_LOADER_VERSION.encode())
    for name in SEED_FILES:
        digest.update(name.encode())
        digest.update(seed_file_text(name).encode())
    return "sha256:" + digest.hexdigest()


def _replace_reference_data(cur: duckdb.DuckDBPyConnection, catalog: SeedCatalog) -> None:
    for table in ("gpus", "gpu_aliases", "throughput_profiles", "serving_profiles", "unusable_rows"):
        cur.execute(f"DELETE FROM {table}")
    insert_rows(
        cur, "gpus", catalog.gpus[0].__struct_fields__, [msgspec.structs.astuple(g) for g in catalog.gpus]
    )
    by_name = {g.name: g.gpu_id for g in catalog.gpus}
    insert_rows(
        cur,
        "gpu_aliases",
        ("alias", "gpu_id", "context", "evidence"),
        [
            (a.alias, by_name.get(a.canonical_gpu, a.canonical_gpu), a.context, a.evidence)
            for a in catalog.aliases
        ],
    )
    names = {g.gpu_id: g.name for g in catalog.gpus}
    profile_fields = (
        "profile_id",
        "gpu_id",
        "gpu_name",
        "gpu_count",
        "interconnect",
        "model",
        "task",
        "precision",
        "batch_size",
        "seq_len_or_resolution",
        "metric",
        "value",
        "notes",
        "source",
        "dataset",
    )
    insert_rows(
        cur,
        "throughput_profiles",
        profile_fields,
        [
            tuple(names[p.gpu_id] if f == "gpu_name" else getattr(p, f) for f in profile_fields)
            for p in catalog.profiles.items
        ],
    )
    serving_fields = (
        "serving_id",
        "model",
        "gpu_id",
        "gpu_name",
        "tp",
        "input_len_lo_excl",
        "input_len_hi_incl",
        "output_len_lo_excl",
        "output_len_hi_incl",
        "max_requests_per_s",
        "slo",
        "hourly_cost_usd",
        "in_grid",
        "source",
    )
    insert_rows(
        cur,
        "serving_profiles",
        serving_fields,
        [
            tuple(names[s.gpu_id] if f == "gpu_name" else getattr(s, f) for f in serving_fields)
            for s in catalog.serving.items
        ],
    )
    now = datetime.now(UTC)
    insert_rows(
        cur,
        "unusable_rows",
        ("file", "line", "column", "value", "reason", "recorded_at"),
        [(p.file, p.line, p.column, p.value, p.reason, now) for p in catalog.problems],
    )


def ensure_seeded(cur: duckdb.DuckDBPyConnection, *, force: bool = False) -> SeedReport:
    """Load the shipped data unless this exact data is already loaded."""
    fingerprint = seed_fingerprint()
    row = cur.execute("SELECT content_hash FROM seed_state WHERE dataset = ?", [SEED_SOURCE]).fetchone()
    if row is not None and row[0] == fingerprint and not force:
        return SeedReport(loaded=False, fingerprint=fingerprint)
    catalog = read_seed_catalog()
    now = datetime.now(UTC)
    cur.execute("BEGIN TRANSACTION")
    try:
        _replace_reference_data(cur, catalog)
        rental = add_rental_version(
            cur,
            source=SEED_SOURCE,
            fmt="cloud-prices-csv",
            offers=catalog.offers.offers,
            fetched_at=now,
            origin="shipped file service/data/cloud_gpu_prices.csv",
        )
        ownership = add_ownership_version(
            cur,
            source=SEED_SOURCE,
            fmt="ownership-csv",
            prices=catalog.ownership_prices.items,
            defaults=catalog.ownership_defaults.items,
            fetched_at=now,
            origin="shipped files service/data/ownership_prices.csv, ownership_defaults.csv",
        )
        cur.execute("INSERT OR REPLACE INTO seed_state VALUES (?, ?, ?)", [SEED_SOURCE, fingerprint, now])
        cur.execute("COMMIT")
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    if catalog.problems:
        _log.warning(
            "%d shipped rows not used (reasons in table unusable_rows; `gpuplan db stats` lists them)",
            len(catalog.problems),
        )
    for problem in catalog.problems:
        _log.info(
            "seed row not used: %s line %d (%s=%r): %s",
            problem.file,
            problem.line,
            problem.column,
            problem.value,
            problem.reason,
        )
    return SeedReport(
        loaded=True,
        fingerprint=fingerprint,
        rental_version=rental,
        ownership_version=ownership,
        unusable_rows=len(catalog.problems),
    )
