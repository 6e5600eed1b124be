"""The ``gpuplan`` command line: serve the API, manage the database, browse the catalog.

The CLI calls the same functions as the HTTP API (``service.catalog``), on the same database file.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from service.catalog import OFFER_SORTS, GpuQuery, OfferQuery, list_gpus, list_offers
from service.cli_buy_vs_rent import register as register_buy_vs_rent
from service.cli_plan import register as register_plan
from service.cli_prices import register as register_prices
from service.console import print_json, print_table
from service.db.cli import register as register_db
from service.db.store import Store
from service.errors import InvalidParameter, ServiceError
from service.refresh import load_sources
from service.settings import Settings
from solver.errors import InvalidWorkload

__all__ = ["main"]


def _open(args: argparse.Namespace) -> Store:
    return Store.open(args.db)


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    os.environ["GPUPLAN_DB"] = args.db
    settings = Settings.from_env()
    if settings.sources_file:  # a bad sources file stops the start here, with its reason
        try:
            load_sources(settings.sources_file)
        except ValueError as exc:
            raise InvalidParameter("GPUPLAN_SOURCES", str(exc)) from None
    logging.getLogger().setLevel(args.log_level.upper())
    # Open (create, migrate, seed) once before serving, so a bad path fails here with a clear message.
    Store.open(args.db).close()
    uvicorn.run(
        "service.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        log_level=args.log_level.lower(),
        workers=1,  # one process owns the DuckDB file
    )
    return 0


def _cmd_gpus(args: argparse.Namespace) -> int:
    store = _open(args)
    try:
        page = list_gpus(store, GpuQuery(vendor=args.vendor, min_memory_gib=args.min_memory_gib, limit=1000))
    finally:
        store.close()
    if args.json:
        print_json(page)
        return 0
    print_table(
        [
            (
                g.gpu_id,
                g.name,
                g.vendor,
                g.memory_gib,
                g.memory_bandwidth_tbps,
                g.bf16_tflops,
                g.tdp_w,
                g.nvlink,
                g.ecc,
            )
            for g in page.items
        ],
        ["id", "name", "vendor", "mem GiB", "TB/s", "bf16 TFLOPS", "TDP W", "NVLink", "ECC"],
    )
    print(f"\n{page.total} GPUs")
    return 0


def _cmd_offers(args: argparse.Namespace) -> int:
    store = _open(args)
    try:
        query = OfferQuery(
            gpu=args.gpu,
            provider=args.provider,
            region=args.region,
            min_gpus=args.min_gpus,
            max_gpus=args.max_gpus,
            max_price=args.max_price,
            max_price_per_gpu=args.max_price_per_gpu,
            interconnect=args.interconnect,
            sort=args.sort,
            limit=args.limit,
            offset=args.offset,
        )
        page = list_offers(store, query)
    finally:
        store.close()
    if args.json:
        print_json(page)
        return 0
    print_table(
        [
            (
                o.provider,
                o.instance_type,
                o.region,
                o.gpu,
                o.gpus_per_instance,
                o.interconnect,
                o.price_per_hour_usd,
                o.price_per_gpu_hour_usd,
                o.spot_price_per_hour_usd,
            )
            for o in page.items
        ],
        ["provider", "instance type", "region", "GPU", "GPUs", "interconnect", "$/h", "$/GPU-h", "spot $/h"],
    )
    print(f"\n{len(page.items)} of {page.total} offers (offset {page.offset})")
    return 0


def _parser() -> argparse.ArgumentParser:
    settings = Settings.from_env()
    parser = argparse.ArgumentParser(
        prog="gpuplan", description="GPU cost planner service and catalog tools."
    )
    parser.add_argument(
        "--db", default=settings.db_path, help=f"DuckDB file (default {settings.db_path}; GPUPLAN_DB)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="start the HTTP API (creates and seeds the database on first start)")
    serve.add_argument("--host", default=settings.host, help="bind address (GPUPLAN_HOST)")
    serve.add_argument("--port", type=int, default=settings.port, help="port (GPUPLAN_PORT)")
    serve.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB file (GPUPLAN_DB)")
    serve.add_argument("--log-level", default=settings.log_level, help="GPUPLAN_LOG_LEVEL")
    serve.set_defaults(func=_cmd_serve)

    register_db(sub)

    gpus = sub.add_parser("gpus", help="list the GPU catalog")
    gpus.add_argument("--db", default=argparse.SUPPRESS)
    gpus.add_argument("--vendor")
    gpus.add_argument("--min-memory-gib", type=float)
    gpus.add_argument("--json", action="store_true", help="print JSON")
    gpus.set_defaults(func=_cmd_gpus)

    offers = sub.add_parser("offers", help="list current rental offers")
    offers.add_argument("--db", default=argparse.SUPPRESS)
    offers.add_argument("--gpu", help="GPU id, name or alias (H100 matches every H100 variant)")
    offers.add_argument("--provider")
    offers.add_argument("--region")
    offers.add_argument("--min-gpus", type=int)
    offers.add_argument("--max-gpus", type=int)
    offers.add_argument("--max-price", type=float, help="on-demand USD per instance-hour")
    offers.add_argument("--max-price-per-gpu", type=float, help="on-demand USD per GPU-hour")
    offers.add_argument(
        "--interconnect", choices=["none", "pcie", "nvlink", "nvswitch"], help="at least this class"
    )
    offers.add_argument("--sort", choices=OFFER_SORTS, default="price_per_gpu_hour_usd")
    offers.add_argument("--limit", type=int, default=50)
    offers.add_argument("--offset", type=int, default=0)
    offers.add_argument("--json", action="store_true", help="print JSON")
    offers.set_defaults(func=_cmd_offers)

    register_plan(sub)
    register_prices(sub)

    register_buy_vs_rent(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gpuplan`` console script; returns the exit status."""
    try:
        parser = _parser()
    except ValueError as exc:  # a bad GPUPLAN_* variable
        print(f"gpuplan: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        result: int = args.func(args)
    except ServiceError as exc:
        print(f"gpuplan: {exc.detail}", file=sys.stderr)
        return 2 if exc.status_code == 400 else 1
    except InvalidWorkload as exc:
        print(f"gpuplan: {exc}", file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())
