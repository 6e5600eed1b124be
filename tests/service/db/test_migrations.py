"""One migration history on both backends: applied once (a second start applies nothing), the same
tables and columns on DuckDB and PostgreSQL, an existing DuckDB file upgraded to sequences that start
after its numbers, and three processes starting together on an empty PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

from service.db.duckdb_backend import DuckDbBackend
from service.db.migrations import MIGRATIONS, apply_migrations
from service.db.seed import ensure_seeded
from service.db.store import Store
from tests.pg_cluster import PgCluster, run_together


def test_migrations_and_seed_apply_once(db_target: str) -> None:
    with Store.open(db_target) as store:
        assert apply_migrations(store.backend) == []
        assert not ensure_seeded(store.backend).loaded
        with store.cursor() as cur:
            versions = [r[0] for r in cur.execute("SELECT version FROM schema_version ORDER BY 1").fetchall()]
            sheets = cur.execute("SELECT count(*) FROM price_sheets").fetchone()
    assert versions == [m[0] for m in MIGRATIONS]
    assert sheets == (3,)  # the shipped rental, ownership and provider-cost sheets, once


_COLUMNS = (
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ? "
    "ORDER BY table_name, ordinal_position"
)


def test_both_backends_have_the_same_tables_and_columns(pg_cluster: PgCluster) -> None:
    with Store.open(":memory:") as duck, duck.cursor() as cur:
        on_duckdb = cur.execute(_COLUMNS, ["main"]).fetchall()
    with Store.open(pg_cluster.fresh_url()) as pg, pg.cursor() as cur:
        on_postgresql = cur.execute(_COLUMNS, ["public"]).fetchall()
    assert len(on_duckdb) > 100
    assert on_postgresql == on_duckdb


def test_an_existing_duckdb_file_numbers_on_after_its_highest_version_and_id(tmp_path: Path) -> None:
    path = str(tmp_path / "old.duckdb")
    old = DuckDbBackend.open(path)
    assert apply_migrations(old, MIGRATIONS[:7]) == [1, 2, 3, 4, 5, 6, 7]  # a database of before 8
    with old.cursor() as cur:
        cur.execute(
            "INSERT INTO price_sheets VALUES (41, 'old', 'rental', 'rental_csv', 'sha256:x', 0, "
            "current_timestamp, current_timestamp, current_timestamp, 'a test', NULL)"
        )
        for n, price in enumerate((300.0, 100.0, 200.0)):
            cur.execute(
                "INSERT INTO ownership_prices VALUES (41, 'h100-sxm', 'H100 SXM', 'NVIDIA', ?, 'list', "
                "'2024', NULL, NULL, NULL, 'a test', 'https://example.com', 'high', ?)",
                [price, f"row {n}"],
            )
    old.close()
    with Store.open(path) as store, store.cursor() as cur:
        assert store.seed_report.rental_version == 42  # the shipped sheets come after version 41
        ordered = cur.execute("SELECT notes FROM ownership_prices WHERE version = 41 ORDER BY row_order")
        assert [r[0] for r in ordered.fetchall()] == ["row 0", "row 1", "row 2"]  # stored order kept


_OPEN = (
    "import sys\n"
    "from service.db.store import Store\n"
    "with Store.open(sys.argv[1]) as store:\n"
    "    print(store.seed_report.loaded)\n"
)


def test_three_processes_starting_together_on_an_empty_postgresql_database(pg_cluster: PgCluster) -> None:
    url = pg_cluster.empty_url()
    outputs = run_together(_OPEN, url, 3)
    assert sorted(out.strip() for out in outputs) == ["False", "False", "True"]  # one seeds, after migrating
    with Store.open(url) as store, store.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM schema_version").fetchone() == (len(MIGRATIONS),)
        assert cur.execute("SELECT count(*) FROM price_sheets").fetchone() == (3,)
