"""The ``gpuplan`` command line: ``serve`` is here; every other command is registered by its feature
package's ``cli`` module (``db``, ``gpus`` and ``offers`` from ``catalog``, ``plan``, ``portfolio``, ``prices``,
``measurements``, ``buy-vs-rent``), which calls the same functions as the HTTP API on the same database file, or, while a
running server holds that file (or ``--url`` names one), asks that server (``service.server.client``).
"""

from __future__ import annotations

import argparse
import logging
import logging.config
import os
import sys
from collections.abc import Sequence
from typing import Any

from service.benchmarks.cli import register as register_benchmarks
from service.buy_vs_rent.cli import register as register_buy_vs_rent
from service.catalog.cli import register as register_catalog
from service.console import glue_dash_values
from service.db.cli import register as register_db
from service.db.store import Store
from service.errors import InvalidParameter, ServiceError
from service.estimates.cli import register as register_estimates
from service.launch.cli import register as register_launch
from service.measurements.cli import register as register_measurements
from service.ops.logs import log_config
from service.plans.cli import register as register_plan
from service.portfolios.cli import register as register_portfolio
from service.price_sheets.cli import register as register_prices
from service.price_sheets.sources import load_sources
from service.server.check import register as register_check
from service.server.limits import MAX_HEAD_BYTES, head_limited_h11
from service.settings import Settings
from solver import SolverError

__all__ = ["main"]


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    os.environ["GPUPLAN_DB"] = args.db
    os.environ["GPUPLAN_SCHEDULER"] = (
        args.scheduler
    )  # the app factory reads its settings from the environment
    settings = Settings.from_env()
    if settings.sources_file:  # a bad sources file stops the start here, with its reason
        try:
            load_sources(settings.sources_file)
        except ValueError as exc:
            raise InvalidParameter("GPUPLAN_SOURCES", str(exc)) from None
    logs = log_config(args.log_level, settings.log_format)  # one format for the app and uvicorn
    logging.config.dictConfig(logs)
    # Open (create, migrate, seed) once before serving, so a bad path fails here with a clear message.
    Store.open(args.db).close()
    uvicorn.run(
        "service.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        log_level=args.log_level.lower(),
        log_config=logs,
        workers=1,  # one process owns the DuckDB file
        http=head_limited_h11(settings.request_timeout_s),  # a request head must arrive in time
        timeout_keep_alive=5,  # an idle connection between requests is closed after 5 s
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        ws="none",  # the API has no WebSocket route: no upgrade handling, nothing imported for it
    )
    return 0


def _register_plans(sub: Any) -> None:
    """``gpuplan plans …``: commands on a stored plan, each registered by its feature package."""
    plans = sub.add_parser("plans", help="act on a stored plan: what to benchmark next, launch files")
    plans_sub = plans.add_subparsers(dest="plans_command", required=True)
    register_benchmarks(plans_sub)
    register_launch(plans_sub)


def _parser() -> argparse.ArgumentParser:
    settings = Settings.from_env()
    parser = argparse.ArgumentParser(
        prog="gpuplan", description="GPU cost planner service and catalog tools."
    )
    parser.add_argument(
        "--db", default=settings.db_path, help=f"DuckDB file (default {settings.db_path}; GPUPLAN_DB)"
    )
    parser.add_argument(
        "--url",
        default=None,
        help="ask the gpuplan server at this URL instead of opening the database (default: the server at "
        "GPUPLAN_HOST:GPUPLAN_PORT, asked when it holds the database file)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="start the HTTP API (creates and seeds the database on first start)")
    serve.add_argument("--host", default=settings.host, help="bind address (GPUPLAN_HOST)")
    serve.add_argument("--port", type=int, default=settings.port, help="port (GPUPLAN_PORT)")
    serve.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB file (GPUPLAN_DB)")
    serve.add_argument("--log-level", default=settings.log_level, help="GPUPLAN_LOG_LEVEL")
    serve.add_argument(
        "--scheduler",
        choices=("on", "off"),
        default="on" if settings.run_scheduler else "off",
        help="refresh GPUPLAN_SOURCES on their schedule in this process (GPUPLAN_SCHEDULER; off: a "
        "`gpuplan prices refresh` job does)",
    )
    serve.set_defaults(func=_cmd_serve)

    for register in (
        register_db,
        register_catalog,
        register_estimates,
        register_plan,
        register_portfolio,
        _register_plans,
        register_prices,
        register_measurements,
        register_buy_vs_rent,
        register_check,
    ):
        register(sub)  # in this order in `gpuplan --help`
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gpuplan`` console script; returns the exit status."""
    try:
        parser = _parser()
    except ValueError as exc:  # a bad GPUPLAN_* variable
        print(f"gpuplan: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(glue_dash_values(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        result: int = args.func(args)
    except ServiceError as exc:
        print(f"gpuplan: {exc.detail}", file=sys.stderr)
        return 2 if exc.status_code == 400 else 1
    except SolverError as exc:  # a workload, layout or constraint the solver cannot answer (a 4xx in the API)
        print(f"gpuplan: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `gpuplan offers | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return result


if __name__ == "__main__":
    sys.exit(main())
