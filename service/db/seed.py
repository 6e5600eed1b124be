"""Load the shipped seed data into the store: once, idempotently, in one transaction.

The GPU catalog, aliases and profiles are reference data: they are replaced whole when the shipped
files change. Prices become sheet versions of the ``seed`` source, so a restart adds nothing and a
changed shipped sheet adds one version, keeping history.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from service.db.backend import Backend, Cursor
from service.db.bulk import insert_rows
from service.db.gpu_rows import GPU_COLUMNS, gpu_row
from service.db.seed_files import SEED_FILES, SeedCatalog, read_seed_catalog, seed_file_text
from service.db.sequences import take_ids
from service.db.sheet_versions import add_version, ownership_sheet, provider_costs_sheet, rental_sheet
from solver import MeasuredProfile, ServingProfile

__all__ = ["SEED_RENTAL_PRICES_AS_OF", "SEED_SOURCE", "SeedReport", "ensure_seeded", "seed_fingerprint"]

SEED_SOURCE = "seed"
SEED_RENTAL_PRICES_AS_OF = datetime(2025, 11, 6, tzinfo=UTC)
"""When the shipped rental prices were taken, as the seed sheet's ``fetched_at``: its age is the data's
age, not the database's, so plans warn ``price_sheet_stale`` on old shipped prices. The snapshot
commits' exact dates are unknown; schema v8 catalogs first shipped with SkyPilot 0.10.5, built
2025-11-06 (service/data/README-cloud_gpu_prices.md, "Dates"; the Azure rows are older still)."""
_LOADER_VERSION = "2"  # bump when parsing changes, so existing databases reload the seed
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


def _insert_named(
    cur: Cursor,
    table: str,
    fields: tuple[str, ...],
    rows: Sequence[MeasuredProfile | ServingProfile],
    names: dict[str, str],
) -> None:
    """Insert profile rows (``fields`` in order) with the catalog name of their GPU (``gpu_name``)."""
    insert_rows(
        cur,
        table,
        (*fields, "gpu_name"),
        [(*msgspec.structs.astuple(row), names[row.gpu_id]) for row in rows],
    )


def _replace_reference_data(cur: Cursor, catalog: SeedCatalog) -> None:
    for table in ("gpus", "gpu_aliases", "throughput_profiles", "serving_profiles", "unusable_rows"):
        cur.execute(f"DELETE FROM {table}")
    insert_rows(cur, "gpus", GPU_COLUMNS, [gpu_row(g) for g in catalog.gpus])
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
    _insert_named(
        cur, "throughput_profiles", MeasuredProfile.__struct_fields__, catalog.profiles.items, names
    )
    # serving ids from their sequence, as uploads take theirs: the two never collide
    ids = take_ids(cur, "serving_profile_id_seq", len(catalog.serving.items))
    serving = [
        msgspec.structs.replace(p, serving_id=i) for p, i in zip(catalog.serving.items, ids, strict=True)
    ]
    _insert_named(cur, "serving_profiles", ServingProfile.__struct_fields__, serving, names)
    now = datetime.now(UTC)
    insert_rows(
        cur,
        "unusable_rows",
        ("file", "line", "column", "value", "reason", "recorded_at"),
        [(p.file, p.line, p.column, p.value, p.reason, now) for p in catalog.problems],
    )


def _load(
    cur: Cursor, catalog: SeedCatalog, fingerprint: str, now: datetime
) -> tuple[int | None, int | None]:
    """Replace the reference data and add the shipped sheets as versions (unchanged ones add none);
    returns the rental and ownership versions added."""
    _replace_reference_data(cur, catalog)
    sheets = (
        (rental_sheet(catalog.offers.offers), "cloud-prices-csv", "cloud_gpu_prices.csv"),
        (
            ownership_sheet(catalog.ownership_prices.items, catalog.ownership_defaults.items),
            "ownership-csv",
            "ownership_prices.csv, ownership_defaults.csv",
        ),
        (provider_costs_sheet(catalog.provider_costs.costs), "provider_costs_csv", "provider_costs.csv"),
    )
    versions = [
        add_version(
            cur,
            content,
            source=SEED_SOURCE,
            fmt=fmt,
            fetched_at=SEED_RENTAL_PRICES_AS_OF if content.kind == "rental" else now,
            origin=f"shipped service/data/{files}",
        )
        for content, fmt, files in sheets
    ]
    cur.execute(
        "INSERT INTO seed_state VALUES (?, ?, ?) ON CONFLICT (dataset) "
        "DO UPDATE SET content_hash = excluded.content_hash, loaded_at = excluded.loaded_at",
        [SEED_SOURCE, fingerprint, now],
    )
    return versions[0], versions[1]


def _log_unused(catalog: SeedCatalog) -> None:
    """One INFO line for the shipped rows the store does not use (counted per file and reason); each
    row at DEBUG. They are known and expected (``gpuplan db stats`` lists them), not a fault."""
    if not catalog.problems:
        return
    counts = Counter((p.file, p.reason) for p in catalog.problems)
    summary = "; ".join(f"{n} in {file}: {reason}" for (file, reason), n in counts.most_common())
    _log.info("%d shipped rows not used (%s); `gpuplan db stats` lists them", len(catalog.problems), summary)
    for problem in catalog.problems:
        _log.debug(
            "seed row not used: %s line %d (%s=%r): %s",
            problem.file,
            problem.line,
            problem.column,
            problem.value,
            problem.reason,
        )


def ensure_seeded(backend: Backend, *, force: bool = False) -> SeedReport:
    """Load the shipped data unless this exact data is already loaded."""
    fingerprint = seed_fingerprint()
    with backend.cursor() as cur:
        row = cur.execute("SELECT content_hash FROM seed_state WHERE dataset = ?", [SEED_SOURCE]).fetchone()
    if row is not None and row[0] == fingerprint and not force:
        return SeedReport(loaded=False, fingerprint=fingerprint)
    catalog = read_seed_catalog()

    rental, ownership = backend.transaction(lambda cur: _load(cur, catalog, fingerprint, datetime.now(UTC)))
    _log_unused(catalog)
    return SeedReport(
        loaded=True,
        fingerprint=fingerprint,
        rental_version=rental,
        ownership_version=ownership,
        unusable_rows=len(catalog.problems),
    )
