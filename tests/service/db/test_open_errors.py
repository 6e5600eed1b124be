"""Opening a database that cannot be used says which one and why (issue 13, B7), in one line.

The file cases are DuckDB's alone (PostgreSQL has no file to hold, truncate or corrupt); a PostgreSQL
server that refuses the login or has no such database is the last test.
"""

from __future__ import annotations

import socket
from pathlib import Path

import duckdb
import pytest

from service.db.store import Store
from service.errors import StoreUnavailable
from tests.pg_cluster import PgCluster


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _database(tmp_path: Path) -> bytes:
    path = tmp_path / "good.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS i FROM range(100000)")
    return path.read_bytes()


def _refused(path: Path) -> str:
    with pytest.raises(StoreUnavailable) as caught:
        Store.open(str(path))
    detail = caught.value.detail
    assert str(path) in detail and "\n" not in detail
    assert "Another" not in detail and "holds it" not in detail  # not blamed on a lock
    return detail


def test_a_file_that_is_not_a_database_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "notes.duckdb").write_text("plain text, not a database\n" * 20)
    assert "not a DuckDB database" in _refused(tmp_path / "notes.duckdb")
    (tmp_path / "empty.duckdb").write_bytes(b"")
    assert "not a DuckDB database" in _refused(tmp_path / "empty.duckdb")


def test_a_truncated_database_is_named_truncated(tmp_path: Path) -> None:
    data = _database(tmp_path)
    (tmp_path / "cut.duckdb").write_bytes(data[: len(data) // 2])
    assert "truncated" in _refused(tmp_path / "cut.duckdb")


def test_a_corrupt_block_is_named_corrupt(tmp_path: Path) -> None:
    data = bytearray(_database(tmp_path))
    data[5000:9000] = b"\xff" * 4000  # inside the first data block, past the headers
    (tmp_path / "bad.duckdb").write_bytes(bytes(data))
    assert "corrupt" in _refused(tmp_path / "bad.duckdb")


def test_a_directory_or_a_file_in_the_folder_path_is_named(tmp_path: Path) -> None:
    (tmp_path / "dir.duckdb").mkdir()
    assert "is a directory" in _refused(tmp_path / "dir.duckdb")
    (tmp_path / "plain").write_text("x")
    assert "not a folder" in _refused(tmp_path / "plain" / "sub" / "x.duckdb")


def test_a_postgresql_database_that_cannot_be_reached_is_named_without_its_password(
    pg_cluster: PgCluster,
) -> None:
    missing = pg_cluster.url("no_such_database").replace("postgres@", "postgres:s3cret@")
    with pytest.raises(StoreUnavailable) as caught:
        Store.open(missing)
    detail = caught.value.detail
    assert "no_such_database" in detail and "does not exist" in detail and "must exist" in detail
    assert "s3cret" not in detail and "postgres:***@" in detail
    closed = f"postgresql://postgres@127.0.0.1:{_free_port()}/gpuplan"
    with pytest.raises(StoreUnavailable) as caught:
        Store.open(closed)
    assert "Connection refused" in caught.value.detail or "connect" in caught.value.detail
