"""``gpuplan gpus`` and ``gpuplan offers``: the catalog from the command line (the same queries as the API)."""

from __future__ import annotations

import argparse
from typing import Any

from service.catalog.queries import OFFER_SORTS, GpuQuery, OfferQuery, list_gpus, list_offers
from service.catalog.schemas import GpuOut, GpuPage, OfferPage
from service.console import print_json, print_table
from service.db.store import Store
from service.server.client import add_target_options, query_params, reach
from solver import NETWORK_CLASSES, REQUIREMENTS

__all__ = ["register"]


def _cmd_gpus(args: argparse.Namespace) -> int:
    query = GpuQuery(
        vendor=args.vendor,
        min_memory_gib=args.min_memory_gib,
        mig=args.mig,
        supports=args.supports,
        limit=1000,
    )
    with reach(args) as where:
        if isinstance(where, Store):
            page = list_gpus(where.snapshot, query)
        else:
            page = where.get("/v1/gpus", GpuPage, query_params(query))
    if args.json:
        print_json(page)
        return 0
    if args.mig:
        _print_slices(page.items)
    else:
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
                    g.software.stack,
                    g.software.architecture,
                    ",".join(g.software.supports),
                )
                for g in page.items
            ],
            [
                "id",
                "name",
                "vendor",
                "mem GiB",
                "TB/s",
                "bf16 TFLOPS",
                "TDP W",
                "NVLink",
                "ECC",
                "stack",
                "arch",
                "supports",
            ],
        )
    print(f"\n{page.total} {'MIG slices' if args.mig else 'GPUs'}")
    return 0


def _print_slices(items: list[GpuOut]) -> None:
    print_table(
        [
            (
                g.gpu_id,
                g.parent_gpu_id,
                g.mig_profile,
                g.memory_gib,
                g.memory_bandwidth_tbps,
                g.bf16_tflops,
                g.mig.max_count if g.mig else None,
            )
            for g in items
        ],
        ["id", "parent", "profile", "mem GiB", "TB/s", "bf16 TFLOPS", "per GPU"],
    )


def _cmd_offers(args: argparse.Namespace) -> int:
    query = OfferQuery(**{f: getattr(args, f) for f in OfferQuery.__struct_fields__})  # options of one name
    with reach(args) as where:
        if isinstance(where, Store):
            page = list_offers(where, query)
        else:
            page = where.get("/v1/offers", OfferPage, query_params(query))
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
                f"{o.network.network_class} {o.network.gbps:g}",
                o.price_per_hour_usd,
                o.price_per_gpu_hour_usd,
                o.spot_price_per_hour_usd,
            )
            for o in page.items
        ],
        [
            "provider",
            "instance type",
            "region",
            "GPU",
            "GPUs",
            "interconnect",
            "network Gbit/s",
            "$/h",
            "$/GPU-h",
            "spot $/h",
        ],
    )
    print(f"\n{len(page.items)} of {page.total} offers (offset {page.offset})")
    return 0


def register(sub: Any) -> None:
    """Add ``gpuplan gpus`` and ``gpuplan offers`` to the CLI's subparsers."""
    gpus = sub.add_parser("gpus", help="list the GPU catalog")
    add_target_options(gpus)
    gpus.add_argument("--vendor")
    gpus.add_argument("--min-memory-gib", type=float)
    gpus.add_argument("--mig", action="store_true", help="list the MIG slices of the GPUs instead")
    gpus.add_argument("--supports", choices=REQUIREMENTS, help="only GPUs that run this software requirement")
    gpus.add_argument("--json", action="store_true", help="print JSON")
    gpus.set_defaults(func=_cmd_gpus)

    offers = sub.add_parser("offers", help="list current rental offers")
    add_target_options(offers)
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
    offers.add_argument("--network-class", choices=NETWORK_CLASSES, help="this network between instances")
    offers.add_argument("--min-network-gbps", type=float, help="at least this many Gbit/s between instances")
    offers.add_argument("--sort", choices=OFFER_SORTS, default="price_per_gpu_hour_usd")
    offers.add_argument("--limit", type=int, default=50)
    offers.add_argument("--offset", type=int, default=0)
    offers.add_argument("--json", action="store_true", help="print JSON")
    offers.set_defaults(func=_cmd_offers)
