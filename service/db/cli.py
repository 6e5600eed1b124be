"""``gpuplan db init|stats``: create, migrate and seed the database; what it holds and what it could not use.

While a running server holds the database, ``init`` says what that server made of it and ``stats`` asks
it (``GET /v1/db/stats``); see ``service.server.client``.
"""

from __future__ import annotations

import argparse
from typing import Any

from service.console import print_json, print_table
from service.db.stats import DbStats, db_stats
from service.db.store import Store
from service.health import Health
from service.server.client import ApiClient, add_target_options, reach

__all__ = ["register"]


def _init_through(server: ApiClient) -> None:
    health = server.get("/health", Health)
    print(
        f"database held by the gpuplan server at {server.url} (process {health.pid}), which created, "
        f"migrated and seeded it: schema version {health.db.schema_version}, {health.db.gpus} GPUs, "
        f"{health.db.current_offers} current offers, {health.db.price_sheet_versions} sheet versions"
    )


def _cmd_init(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if not isinstance(where, Store):
            _init_through(where)
            return 0
        report = where.seed_report
        state = "seeded now" if report.loaded else "already seeded"
        print(f"database {where.path}: schema version {where.schema_version()}, {state}")
        if report.loaded:
            print(
                f"rental sheet version {report.rental_version}, "
                f"ownership sheet version {report.ownership_version}"
            )
            print(f"{report.unusable_rows} shipped rows not used (see `gpuplan db stats`)")
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if isinstance(where, Store):
            stats = db_stats(where)
        else:
            stats = where.call("GET", "/v1/db/stats", DbStats, admin=True)  # the path with the token
    if args.json:
        print_json(stats)
        return 0
    print(f"database {stats.path} (schema version {stats.schema_version})\n")
    print_table([(t.table, t.rows) for t in stats.tables], ["table", "rows"])
    print(f"\nunresolved GPU names: {len(stats.unresolved_gpu_names)}")
    for row in stats.unresolved_gpu_names:
        print(f"  {row.file}:{row.line} {row.value!r}: {row.reason}")
    print(f"rows not used: {len(stats.unusable_rows)}")
    if stats.unusable_rows:
        print()
        print_table(
            [(u.file, u.line, u.column, u.value, u.reason) for u in stats.unusable_rows],
            ["file", "line", "column", "value", "reason"],
        )
    return 0


def register(sub: Any) -> None:
    """Add ``gpuplan db …`` to the CLI's subparsers."""
    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    init = db_sub.add_parser("init", help="create, migrate and seed the database")
    add_target_options(init)
    init.set_defaults(func=_cmd_init)
    stats = db_sub.add_parser("stats", help="rows per table and rows that could not be used")
    add_target_options(stats)
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=_cmd_stats)
