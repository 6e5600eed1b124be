from __future__ import annotations

import csv
import io
import logging
import os
from pathlib import Path

import pytest

from service.db.migrations import MIGRATIONS
from service.db.seed_files import seed_file_text
from service.db.store import Store

TABLES = ("gpus", "gpu_aliases", "price_sheets", "offers", "throughput_profiles", "serving_profiles")


def counts(store: Store) -> dict[str, int]:
    with store.cursor() as cur:
        result = {}
        for table in TABLES:
            row = cur.execute(f"SELECT count(*) FROM {table}").fetchone()
            assert row is not None
            result[table] = int(row[0])
        return result


def shipped_rows(name: str) -> int:
    return len(list(csv.DictReader(io.StringIO(seed_file_text(name)))))


def test_first_start_loads_every_shipped_file(empty_target: str) -> None:
    with Store.open(empty_target) as store:
        loaded = counts(store)
        report = store.seed_report
    assert loaded["gpus"] == shipped_rows("gpu_specs.csv")
    assert loaded["gpu_aliases"] == shipped_rows("gpu_aliases.csv")
    assert loaded["offers"] == shipped_rows("cloud_gpu_prices.csv")
    assert loaded["throughput_profiles"] == sum(
        shipped_rows(name)
        for name in (
            "throughput_profiles.csv",
            "throughput_mlperf_inference.csv",
            "throughput_training_llm.csv",
        )
    )
    assert report.loaded


def test_restart_duplicates_nothing(tmp_path: Path) -> None:
    """A DuckDB file closed and opened again (PostgreSQL: ``test_migrations_and_seed_apply_once``)."""
    path = str(tmp_path / "gpuplan.duckdb")
    first = Store.open(path)
    before = counts(first)
    first.close()
    second = Store.open(path)
    try:
        assert not second.seed_report.loaded
        assert counts(second) == before
        assert second.schema_version() == len(MIGRATIONS)
    finally:
        second.close()


def test_every_row_keeps_its_source(store: Store) -> None:
    with store.cursor() as cur:
        for table in ("gpus", "offers", "throughput_profiles", "serving_profiles", "ownership_prices"):
            row = cur.execute(f"SELECT count(*) FROM {table} WHERE source IS NULL OR source = ''").fetchone()
            assert row == (0,), table


def test_unusable_rows_are_recorded_with_reasons(store: Store) -> None:
    with store.cursor() as cur:
        rows = cur.execute("SELECT file, line, reason FROM unusable_rows").fetchall()
    assert rows, "the shipped Mélange extra rows and priceless ownership rows are reported"
    assert all(reason for _, _, reason in rows)
    files = {file for file, _, _ in rows}
    assert files <= {"serving_profiles_melange.csv", "ownership_prices.csv"}


def test_second_process_gets_a_clear_error(tmp_path: Path) -> None:
    """DuckDB only: one process holds a file (processes share a PostgreSQL database by design)."""
    import subprocess
    import sys

    path = str(tmp_path / "locked.duckdb")
    holder = Store.open(path)
    try:
        code = (
            "import sys\n"
            "from service.errors import StoreUnavailable\n"
            "from service.db.store import Store\n"
            "try:\n"
            f"    Store.open({path!r})\n"
            "except StoreUnavailable as exc:\n"
            "    print(exc.detail); sys.exit(3)\n"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    finally:
        holder.close()
    assert result.returncode == 3, result.stderr
    # the holder by its PID (this test's process holds the file), and the ways out
    assert f"process {os.getpid()} (" in result.stdout and "holds it" in result.stdout, result.stdout
    assert "--url" in result.stdout and "GPUPLAN_DB" in result.stdout, result.stdout


def test_first_start_summarises_the_unused_rows_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The known unused shipped rows are one INFO line with counts per file and reason, not one line
    each (46 lines drowned a first start); each row is at DEBUG."""
    with caplog.at_level(logging.INFO, logger="gpuplan.seed"):
        Store.open(str(tmp_path / "fresh.duckdb")).close()
    lines = [r for r in caplog.records if r.name == "gpuplan.seed" and r.levelno >= logging.INFO]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    message = lines[0].getMessage()
    assert lines[0].levelno == logging.INFO
    assert "shipped rows not used" in message and "serving_profiles_melange.csv" in message
    assert "ownership_prices.csv" in message and "gpuplan db stats" in message
