"""Forward-only schema migrations of the store: one history for DuckDB and PostgreSQL.

Each migration is applied once, in order, inside one transaction, and recorded in ``schema_version``.
Never change what a released migration does: append a new one.

A step is SQL both backends run (PostgreSQL reads the type name ``DOUBLE`` as ``DOUBLE PRECISION``,
translated when it runs), a :class:`Variants` pair where the backends need different SQL for the same
change (side by side, so the history stays one), or a function of the cursor (a value computed first).
PostgreSQL fixes the columns of a ``SELECT *`` view when it is created: a migration that adds columns
to a table under a view recreates the view.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final

import msgspec

from service.db.backend import Backend, Cursor
from service.db.sequences import SEQUENCES

__all__ = [
    "MIGRATIONS",
    "Migration",
    "Step",
    "Variants",
    "apply_migrations",
    "current_schema_version",
]


class Variants(msgspec.Struct, frozen=True):
    """The same change in each backend's SQL."""

    duckdb: tuple[str, ...]
    postgresql: tuple[str, ...]


Step = str | Variants | Callable[[Cursor], None]
Migration = tuple[int, str, tuple[Step, ...]]

_V1: Final = (
    """CREATE TABLE gpus (
        gpu_id VARCHAR PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        vendor VARCHAR NOT NULL,
        memory_gib DOUBLE NOT NULL,
        memory_type VARCHAR,
        memory_bandwidth_tbps DOUBLE,
        bf16_tflops DOUBLE,
        tdp_w DOUBLE,
        nvlink BOOLEAN,
        nvlink_bandwidth_gbps DOUBLE,
        ecc BOOLEAN,
        mig_max_instances INTEGER,
        form_factor VARCHAR,
        launch_msrp_usd DOUBLE,
        source VARCHAR NOT NULL
    )""",
    """CREATE TABLE gpu_aliases (
        alias VARCHAR NOT NULL,
        gpu_id VARCHAR NOT NULL,
        context VARCHAR NOT NULL,
        evidence VARCHAR NOT NULL,
        PRIMARY KEY (alias, context)
    )""",
    """CREATE TABLE price_sheets (
        version INTEGER PRIMARY KEY,
        source VARCHAR NOT NULL,
        kind VARCHAR NOT NULL CHECK (kind IN ('rental', 'ownership')),
        format VARCHAR NOT NULL,
        content_hash VARCHAR NOT NULL,
        row_count INTEGER NOT NULL,
        fetched_at TIMESTAMPTZ NOT NULL,
        effective_at TIMESTAMPTZ NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        origin VARCHAR NOT NULL
    )""",
    """CREATE TABLE offers (
        version INTEGER NOT NULL,
        offer_id VARCHAR NOT NULL,
        provider VARCHAR NOT NULL,
        instance_type VARCHAR NOT NULL,
        region VARCHAR NOT NULL,
        gpu_id VARCHAR NOT NULL,
        gpu_name VARCHAR NOT NULL,
        gpus_per_instance INTEGER NOT NULL,
        gpu_memory_gib DOUBLE,
        vcpus DOUBLE,
        host_memory_gib DOUBLE,
        interconnect VARCHAR NOT NULL,
        interconnect_derived BOOLEAN NOT NULL,
        interconnect_rule VARCHAR NOT NULL,
        price_per_hour_usd DOUBLE,
        spot_price_per_hour_usd DOUBLE,
        billing_increment_s INTEGER NOT NULL,
        source VARCHAR NOT NULL,
        PRIMARY KEY (version, offer_id)
    )""",
    """CREATE TABLE ownership_prices (
        version INTEGER NOT NULL,
        gpu_id VARCHAR NOT NULL,
        gpu_name VARCHAR NOT NULL,
        vendor VARCHAR NOT NULL,
        purchase_price_usd DOUBLE NOT NULL,
        price_basis VARCHAR NOT NULL,
        price_date VARCHAR NOT NULL,
        server_overhead_factor DOUBLE,
        system_power_w_per_gpu DOUBLE,
        gpu_tdp_w DOUBLE,
        source VARCHAR NOT NULL,
        source_url VARCHAR NOT NULL,
        confidence VARCHAR NOT NULL,
        notes VARCHAR NOT NULL
    )""",
    """CREATE TABLE ownership_defaults (
        version INTEGER NOT NULL,
        parameter VARCHAR NOT NULL,
        value DOUBLE NOT NULL,
        unit VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        date VARCHAR NOT NULL,
        confidence VARCHAR NOT NULL,
        notes VARCHAR NOT NULL
    )""",
    """CREATE TABLE throughput_profiles (
        profile_id INTEGER PRIMARY KEY,
        gpu_id VARCHAR NOT NULL,
        gpu_name VARCHAR NOT NULL,
        gpu_count INTEGER NOT NULL,
        interconnect VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        task VARCHAR NOT NULL,
        precision VARCHAR NOT NULL,
        batch_size INTEGER,
        seq_len_or_resolution VARCHAR,
        metric VARCHAR NOT NULL,
        value DOUBLE NOT NULL,
        notes VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        dataset VARCHAR NOT NULL
    )""",
    """CREATE TABLE serving_profiles (
        serving_id INTEGER PRIMARY KEY,
        model VARCHAR NOT NULL,
        gpu_id VARCHAR NOT NULL,
        gpu_name VARCHAR NOT NULL,
        tp INTEGER NOT NULL,
        input_len_lo_excl INTEGER NOT NULL,
        input_len_hi_incl INTEGER NOT NULL,
        output_len_lo_excl INTEGER NOT NULL,
        output_len_hi_incl INTEGER NOT NULL,
        max_requests_per_s DOUBLE NOT NULL,
        slo VARCHAR,
        hourly_cost_usd DOUBLE,
        in_grid BOOLEAN NOT NULL,
        source VARCHAR NOT NULL
    )""",
    """CREATE TABLE unusable_rows (
        file VARCHAR NOT NULL,
        line INTEGER NOT NULL,
        "column" VARCHAR,
        value VARCHAR,
        reason VARCHAR NOT NULL,
        recorded_at TIMESTAMPTZ NOT NULL
    )""",
    """CREATE TABLE seed_state (
        dataset VARCHAR PRIMARY KEY,
        content_hash VARCHAR NOT NULL,
        loaded_at TIMESTAMPTZ NOT NULL
    )""",
    """CREATE VIEW current_sheets AS
        SELECT s.* FROM price_sheets s
        JOIN (SELECT source, kind, max(version) AS version FROM price_sheets GROUP BY source, kind) latest
          USING (source, kind, version)""",
    """CREATE VIEW current_offers AS
        SELECT o.* FROM offers o JOIN current_sheets s ON o.version = s.version AND s.kind = 'rental'""",
)

_V2: Final = (
    """CREATE TABLE plans (
        plan_id VARCHAR PRIMARY KEY,
        created_at TIMESTAMPTZ NOT NULL,
        kind VARCHAR NOT NULL,
        request JSON NOT NULL,
        plan JSON NOT NULL
    )""",
)

_V3: Final = (
    "ALTER TABLE offers ADD COLUMN reserved_1y_price_per_hour_usd DOUBLE",
    "ALTER TABLE offers ADD COLUMN reserved_3y_price_per_hour_usd DOUBLE",
    "ALTER TABLE price_sheets ADD COLUMN report JSON",
    """CREATE TABLE refresh_runs (
        run_id INTEGER PRIMARY KEY,
        source VARCHAR NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ NOT NULL,
        result VARCHAR NOT NULL CHECK (result IN ('ok', 'unchanged', 'rejected', 'failed')),
        error VARCHAR,
        version INTEGER,
        attempts INTEGER NOT NULL,
        report JSON
    )""",
)

_V4: Final = ("ALTER TABLE serving_profiles ADD COLUMN upload_source VARCHAR",)

_V5: Final = (
    "ALTER TABLE offers ADD COLUMN network_class VARCHAR",
    "ALTER TABLE offers ADD COLUMN network_gbps DOUBLE",
    "ALTER TABLE offers ADD COLUMN network_derived BOOLEAN",
    "ALTER TABLE offers ADD COLUMN network_rule VARCHAR",
    """UPDATE offers SET network_class = 'ethernet', network_gbps = 10, network_derived = true,
        network_rule = 'assumed for an offer stored before networks were derived (10 Gbit/s ethernet);'
            || ' the next import of its sheet derives it'""",
)

_PRICE_SHEETS_V6: Final = """CREATE TABLE price_sheets (
        version INTEGER PRIMARY KEY,
        source VARCHAR NOT NULL,
        kind VARCHAR NOT NULL CHECK (kind IN ('rental', 'ownership', 'provider_costs')),
        format VARCHAR NOT NULL,
        content_hash VARCHAR NOT NULL,
        row_count INTEGER NOT NULL,
        fetched_at TIMESTAMPTZ NOT NULL,
        effective_at TIMESTAMPTZ NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        origin VARCHAR NOT NULL,
        report JSON
    )"""

_V6: Final = (
    "DROP VIEW current_offers",
    "DROP VIEW current_sheets",
    Variants(
        # DuckDB cannot alter a CHECK constraint: rebuild price_sheets (and the views over it).
        duckdb=(
            "ALTER TABLE price_sheets RENAME TO price_sheets_v5",
            _PRICE_SHEETS_V6,
            "INSERT INTO price_sheets SELECT * FROM price_sheets_v5",
            "DROP TABLE price_sheets_v5",
        ),
        postgresql=(
            "ALTER TABLE price_sheets DROP CONSTRAINT price_sheets_kind_check, ADD CONSTRAINT "
            "price_sheets_kind_check CHECK (kind IN ('rental', 'ownership', 'provider_costs'))",
        ),
    ),
    _V1[-2],
    _V1[-1],
    """CREATE TABLE provider_costs (
        version INTEGER NOT NULL,
        provider VARCHAR NOT NULL,
        provider_class VARCHAR NOT NULL,
        storage_usd_per_gb_month DOUBLE,
        egress_usd_per_gb DOUBLE,
        ingress_usd_per_gb DOUBLE,
        startup_minutes DOUBLE,
        download_gbps DOUBLE,
        checkpoint_write_gbps DOUBLE,
        preemptions_per_hour DOUBLE,
        source VARCHAR NOT NULL,
        notes VARCHAR NOT NULL,
        PRIMARY KEY (version, provider, provider_class)
    )""",
    "ALTER TABLE offers ADD COLUMN mig_profile VARCHAR",
    "ALTER TABLE offers ADD COLUMN storage_read_gbps DOUBLE",
)

_V7: Final = (
    """CREATE TABLE plan_summaries (
        plan_id VARCHAR PRIMARY KEY,
        created_at TIMESTAMPTZ NOT NULL,
        plan_type VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        gpus VARCHAR[] NOT NULL,
        gpu_count INTEGER NOT NULL,
        total_usd DOUBLE NOT NULL,
        hours DOUBLE NOT NULL
    )""",
    # The plans stored before: the same summary service.plans.listing writes with every new plan.
    Variants(
        duckdb=(
            """INSERT INTO plan_summaries SELECT
        plan_id, created_at, plan->>'$.plan_type', kind, plan->>'$.model',
        CASE WHEN plan->>'$.plan_type' = 'job' THEN [plan->>'$.choice.gpu']
            ELSE list_distinct(json_extract_string(plan, '$.choice.replicas[*].gpu')) END,
        CASE WHEN plan->>'$.plan_type' = 'job' THEN (plan->>'$.choice.gpu_count')::INTEGER
            ELSE coalesce(list_sum(list_transform(json_extract(plan, '$.choice.replicas[*]'),
                lambda r: (r->>'$.replicas')::INTEGER * (r->>'$.tp')::INTEGER)), 0) END,
        (plan->>'$.cost.total_usd')::DOUBLE,
        CASE WHEN plan->>'$.plan_type' = 'job' THEN (plan->>'$.estimate.hours')::DOUBLE
            ELSE (plan->>'$.cost.hours')::DOUBLE END
    FROM plans""",
        ),
        postgresql=(
            """INSERT INTO plan_summaries SELECT
        plan_id, created_at, plan->>'plan_type', kind, plan->>'model',
        CASE WHEN plan->>'plan_type' = 'job' THEN ARRAY[plan->'choice'->>'gpu']
            ELSE ARRAY(SELECT DISTINCT r->>'gpu' FROM json_array_elements(plan->'choice'->'replicas') r)
            END,
        CASE WHEN plan->>'plan_type' = 'job' THEN (plan->'choice'->>'gpu_count')::INTEGER
            ELSE coalesce((SELECT sum((r->>'replicas')::INTEGER * (r->>'tp')::INTEGER)
                FROM json_array_elements(plan->'choice'->'replicas') r), 0) END,
        (plan->'cost'->>'total_usd')::DOUBLE PRECISION,
        CASE WHEN plan->>'plan_type' = 'job' THEN (plan->'estimate'->>'hours')::DOUBLE PRECISION
            ELSE (plan->'cost'->>'hours')::DOUBLE PRECISION END
    FROM plans""",
        ),
    ),
    """CREATE TABLE refresh_batches (
        batch_id INTEGER PRIMARY KEY,
        status VARCHAR NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'abandoned')),
        sources VARCHAR[] NOT NULL,
        requested_at TIMESTAMPTZ NOT NULL,
        started_at TIMESTAMPTZ,
        finished_at TIMESTAMPTZ,
        run_ids INTEGER[] NOT NULL
    )""",
)


def _create_sequence(name: str, table: str, column: str) -> Callable[[Cursor], None]:
    """A step: ``CREATE SEQUENCE`` (migration 8) starting after the highest id already stored (DuckDB has no
    ``setval``, so the start is computed first)."""

    def create(cur: Cursor) -> None:
        row = cur.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchone()
        start = int(row[0]) if row else 1
        cur.execute(f"CREATE SEQUENCE {name} START WITH {start}")

    return create


_V8: Final[tuple[Step, ...]] = (
    *(_create_sequence(name, *numbered) for name, numbered in SEQUENCES.items()),
    # PostgreSQL fixes a view's columns when the view is created (DuckDB binds them at each query):
    # migration 6 added offers' mig_profile and storage_read_gbps after creating current_offers.
    "DROP VIEW current_offers",
    _V1[-1],
    # The stored order of ownership rows (ties in choosing a row keep it), which PostgreSQL has no
    # rowid for; existing DuckDB rows are numbered in rowid order as the column is added.
    "CREATE SEQUENCE ownership_row_seq",
    "ALTER TABLE ownership_prices ADD COLUMN row_order BIGINT DEFAULT nextval('ownership_row_seq')",
    "ALTER TABLE ownership_defaults ADD COLUMN row_order BIGINT DEFAULT nextval('ownership_row_seq')",
)

_CATALOG_TABLES: Final = ("price_sheets", "serving_profiles", "seed_state")
"""What the catalog state (``generation``) is read from: a write to any is a write to the catalog."""

_V9: Final[tuple[Step, ...]] = (
    # Which replica ran a refresh (service.db.replica): the runs of all replicas share the table.
    "ALTER TABLE refresh_runs ADD COLUMN replica VARCHAR",
    # A notice to every replica from each transaction that changes the catalog, sent on its commit
    # (service.db.catalog_watch); DuckDB has one process, which reloads its snapshot itself.
    Variants(
        duckdb=(),
        postgresql=(
            """CREATE FUNCTION gpuplan_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('gpuplan_catalog', TG_TABLE_NAME);
            RETURN NULL;
        END $$""",
            *(
                f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION gpuplan_catalog_changed()"
                for table in _CATALOG_TABLES
            ),
        ),
    ),
)

_V10: Final[tuple[Step, ...]] = (
    # Which replica runs a requested refresh: a starting replica abandons only the unfinished batches
    # of replicas that are gone (service.price_sheets.batches), not those another live one is running.
    "ALTER TABLE refresh_batches ADD COLUMN replica VARCHAR",
)

_V11: Final[tuple[Step, ...]] = (
    # GPU facts as data (service/data/gpu_specs.csv): the architecture, the chip family, the NVLink
    # domain, the fp16 peak and the formats each GPU computes in. Rows stored before stay NULL until the
    # seed reloads them (the data file changed, so its fingerprint did), and a NULL is refused when read.
    "ALTER TABLE gpus ADD COLUMN architecture VARCHAR",
    "ALTER TABLE gpus ADD COLUMN family VARCHAR",
    "ALTER TABLE gpus ADD COLUMN nvlink_domain INTEGER",
    "ALTER TABLE gpus ADD COLUMN precisions VARCHAR",
    "ALTER TABLE gpus ADD COLUMN fp16_tflops DOUBLE",
)

_V12: Final[tuple[Step, ...]] = (
    # The plan rate limit's windows, shared by the replicas of one PostgreSQL database
    # (service.plans.rate_windows); a DuckDB process counts in memory and leaves the table empty.
    "CREATE TABLE rate_limit_windows (client_key VARCHAR PRIMARY KEY, hits BIGINT NOT NULL, reset_at BIGINT NOT NULL)",
)

_MEASUREMENT_TABLES: Final = ("measurement_uploads",)

_V13: Final[tuple[Step, ...]] = (
    # Imported benchmark results (service.measurements, issue 26): each upload of a source is a version,
    # the newest version of each source is current; its rows are stored as the catalog rows they become
    # (``profile``: a serving or throughput profile, ids from measurement_row_seq, which starts above any
    # shipped throughput-profile id) beside the run as its tool reported it (``run``).
    "CREATE SEQUENCE measurement_version_seq",
    "CREATE SEQUENCE measurement_row_seq START WITH 1000000000",
    """CREATE TABLE measurement_uploads (
        version INTEGER PRIMARY KEY,
        source VARCHAR NOT NULL,
        format VARCHAR NOT NULL,
        content_hash VARCHAR NOT NULL,
        row_count INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        facts VARCHAR NOT NULL
    )""",
    """CREATE TABLE measurements (
        row_id BIGINT PRIMARY KEY,
        version INTEGER NOT NULL,
        kind VARCHAR NOT NULL CHECK (kind IN ('serving', 'training')),
        model VARCHAR NOT NULL,
        gpu_id VARCHAR NOT NULL,
        run VARCHAR NOT NULL,
        profile VARCHAR NOT NULL
    )""",
    """CREATE VIEW current_measurement_uploads AS
        SELECT u.* FROM measurement_uploads u
        JOIN (SELECT source, max(version) AS version FROM measurement_uploads GROUP BY source) latest
          USING (source, version)""",
    Variants(
        duckdb=(),
        postgresql=tuple(
            f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION gpuplan_catalog_changed()"
            for table in _MEASUREMENT_TABLES
        ),
    ),
)

_V14: Final[tuple[Step, ...]] = (
    # The instances a seller says can be had at once (a rental sheet's available_instances), and
    # current_offers again with it (PostgreSQL fixes a view's columns when it is created).
    "ALTER TABLE offers ADD COLUMN available_instances INTEGER",
    "DROP VIEW current_offers",
    _V1[-1],
    # Portfolios (service.portfolios): the request and the answer, as POST /v1/portfolios returned it.
    """CREATE TABLE portfolios (
        portfolio_id VARCHAR PRIMARY KEY,
        created_at TIMESTAMPTZ NOT NULL,
        request JSON NOT NULL,
        portfolio JSON NOT NULL
    )""",
)

_V15: Final[tuple[Step, ...]] = (
    # What a snapshot reads after a write (issue 28 D6): the current version of each source and kind
    # (the current_sheets view) and the rows of given versions; offers and provider costs have theirs
    # in their primary keys. DuckDB scans these small tables by column (its zone maps skip the rest)
    # and re-reads nothing after another process's write: it has none.
    Variants(
        duckdb=(),
        postgresql=(
            "CREATE INDEX price_sheets_current ON price_sheets (source, kind, version)",
            "CREATE INDEX ownership_prices_version ON ownership_prices (version)",
            "CREATE INDEX ownership_defaults_version ON ownership_defaults (version)",
            # GET /v1/offers?provider=: one provider's current offers beside a 300,000-row source
            # (0.5 s a query scanning the big version's rows, without it)
            "CREATE INDEX offers_provider ON offers (provider, version)",
        ),
    ),
)

_SUMMARY_COLUMNS: Final = (
    ("plan_type", "VARCHAR"),
    ("model", "VARCHAR"),
    ("gpus", "VARCHAR[]"),
    ("gpu_count", "INTEGER"),
    ("total_usd", "DOUBLE"),
    ("hours", "DOUBLE"),
)

_V16: Final[tuple[Step, ...]] = (
    # A plan's summary (GET /v1/plans) in the plan's own row: storing a plan is one insert, not two
    # (a statement costs DuckDB about a millisecond, a third of storing a plan). The summaries migration 7
    # wrote move over; the columns stay nullable (ADD COLUMN has no default) and every new plan fills them.
    *(f"ALTER TABLE plans ADD COLUMN {name} {kind}" for name, kind in _SUMMARY_COLUMNS),
    "UPDATE plans SET "
    + ", ".join(f"{name} = s.{name}" for name, _ in _SUMMARY_COLUMNS)
    + " FROM plan_summaries s WHERE plans.plan_id = s.plan_id",
    "DROP TABLE plan_summaries",
)

MIGRATIONS: Final[tuple[Migration, ...]] = (
    (1, "catalog, price sheets, profiles, seed state", _V1),
    (2, "stored plans", _V2),
    (3, "reserved prices, sheet reports, refresh runs", _V3),
    (4, "uploaded serving profiles keep their upload source", _V4),
    (5, "the network between an offer's instances", _V5),
    (6, "provider cost sheets; offers' MIG profile and storage read rate", _V6),
    (7, "plan summaries (GET /v1/plans); refresh batches (POST /v1/price-sheets/refresh)", _V7),
    (8, "sequences for versions and ids; ownership rows' stored order; current_offers rebuilt", _V8),
    (9, "the replica of each refresh run; catalog change notices (PostgreSQL)", _V9),
    (10, "the replica of each refresh batch", _V10),
    (11, "GPU facts: architecture, family, NVLink domain, formats, fp16 peak", _V11),
    (12, "the plan rate limit's windows, shared by replicas", _V12),
    (13, "imported benchmark results (measurement uploads and their rows)", _V13),
    (14, "stored portfolios; offers' available instances", _V14),
    (15, "indexes on what the catalog snapshot reads", _V15),
    (16, "plan summaries in the plans table (one insert per plan)", _V16),
)

_DOUBLE: Final = re.compile(r"\bDOUBLE\b(?!\s+PRECISION)")


def current_schema_version(cur: Cursor) -> int:
    """The highest applied migration, 0 for a new database (whose ``schema_version`` table is created:
    only then, so a database that takes no writes can still be opened)."""
    known = cur.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
    ).fetchone()
    if known == (0,):
        cur.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
        )
    row = cur.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def _run(cur: Cursor, step: Step) -> None:
    if isinstance(step, Variants):
        for statement in getattr(step, cur.dialect.name):
            cur.execute(statement)
    elif isinstance(step, str):
        cur.execute(_DOUBLE.sub(cur.dialect.double_type, step))
    else:
        step(cur)


def _apply(cur: Cursor, migration: Migration) -> None:
    version, description, steps = migration
    for step in steps:
        _run(cur, step)
    cur.execute("INSERT INTO schema_version VALUES (?, ?, current_timestamp)", [version, description])


def apply_migrations(backend: Backend, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
    """Apply every pending migration (of ``migrations``: all, or the first few to build an older
    database), each in its own transaction; returns the versions applied."""
    applied: list[int] = []
    for migration in migrations:
        with backend.cursor() as cur:
            pending = migration[0] > current_schema_version(cur)
        if pending:
            backend.transaction(functools.partial(_apply, migration=migration))
            applied.append(migration[0])
    return applied
