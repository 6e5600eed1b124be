"""``gpuplan prices import|refresh|history``: the price-sheet operations from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec
from tabulate import tabulate

from pricing import FORMATS, PROVIDER_CLASSES
from service.console import print_json
from service.db.store import Store
from service.errors import InvalidParameter
from service.price_sheets.batches import RefreshBatch
from service.price_sheets.history import list_versions, offer_history
from service.price_sheets.importer import import_sheet
from service.price_sheets.providers import ProviderPage, list_providers
from service.price_sheets.refresh import Refresher
from service.price_sheets.schemas import OfferHistory, RefreshRun, SheetReport, SheetVersionPage
from service.price_sheets.sources import load_sources, validate_source_name
from service.server.client import ApiClient, add_target_options, reach
from service.settings import Settings

__all__ = ["register"]


_SHOWN = 20
"""Offers of each kind of change the import summary lists (the JSON report has them all)."""


def _print_report(report: SheetReport) -> None:
    print(
        f"{report.source} ({report.format}): {report.result}, {report.accepted_rows} of {report.rows} rows usable"
    )
    if report.version is not None:
        print(f"new version {report.version} ({report.content_hash})")
    if report.diff is not None:
        diff = report.diff
        against = (
            f"diff against version {diff.previous_version}"
            if diff.previous_version is not None
            else f"the first version of source {report.source}"
        )
        print(
            f"{against}: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} price changes"
        )
        for offer in diff.added_offers[:_SHOWN]:
            print(
                f"  + {offer.provider} {offer.instance_type} ({offer.region}) {offer.gpus_per_instance}x {offer.gpu}"
            )
        for offer in diff.removed_offers[:_SHOWN]:
            print(
                f"  - {offer.provider} {offer.instance_type} ({offer.region}) {offer.gpus_per_instance}x {offer.gpu}"
            )
        for change in diff.changed[:_SHOWN]:
            print(
                f"  ~ {change.provider} {change.instance_type} ({change.region}) {change.gpu} "
                f"{change.field}: {change.old} -> {change.new}"
            )
    for warning in report.warnings:
        print(f"warning: {warning}")
    if report.problems:
        print(
            tabulate(
                [(p.line, p.column, p.value, p.reason) for p in report.problems],
                headers=["line", "column", "value", "problem"],
            )
        )


def _import_through(server: ApiClient, args: argparse.Namespace, source: str, body: bytes) -> SheetReport:
    """The upload (``POST /v1/price-sheets``, with GPUPLAN_ADMIN_TOKEN) to the server holding the database."""
    params = {
        "source": source,
        "format": args.format,
        **({"provider": args.provider} if args.provider else {}),
    }
    _, answer = server.exchange(
        "POST",
        "/v1/price-sheets",
        params=params,
        content=body,
        content_type="application/json" if args.format.endswith("_json") else "text/csv",
        admin=True,
        accept=(200, 201, 422),  # a rejected sheet's problem carries the whole report
    )
    return msgspec.json.decode(answer, type=SheetReport)


def _cmd_import(args: argparse.Namespace) -> int:
    source = validate_source_name(args.source)
    try:
        body = Path(args.file).read_bytes()
    except OSError as exc:
        raise InvalidParameter("file", f"cannot read {args.file!r}: {exc.strerror}") from None
    with reach(args) as where:
        if not isinstance(where, Store):
            report = _import_through(where, args, source, body)
        else:
            report = import_sheet(
                where,
                source=source,
                fmt=args.format,
                body=body,
                provider=args.provider,
                origin=f"gpuplan prices import {Path(args.file).name}",
                move_factor=Settings.from_env().price_move_factor,
            )
    if args.json:
        print_json(report)
    else:
        _print_report(report)
    return 1 if report.result == "rejected" else 0


def _refresh_here(store: Store, source: str | None) -> list[RefreshRun]:
    """The sources of this process's GPUPLAN_SOURCES, fetched and imported now."""
    settings = Settings.from_env()
    if not settings.sources_file:
        raise InvalidParameter(
            "GPUPLAN_SOURCES", "no sources file configured: set GPUPLAN_SOURCES to a TOML file"
        )
    try:
        sources = load_sources(settings.sources_file)
    except ValueError as exc:
        raise InvalidParameter("GPUPLAN_SOURCES", str(exc)) from None
    refresher = Refresher(store, sources, move_factor=settings.price_move_factor)
    if source is not None and source not in refresher.sources:
        raise InvalidParameter(
            "source", f"not a configured source; configured: {', '.join(refresher.sources)}"
        )
    return [refresher.run(source)] if source else refresher.run_all()


def _cmd_refresh(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if isinstance(where, Store):
            runs = _refresh_here(where, args.source)
        else:  # the server's own sources, run now and waited for
            params = {"wait": "true", **({"source": args.source} if args.source else {})}
            runs = where.call(
                "POST", "/v1/price-sheets/refresh", RefreshBatch, params=params, admin=True
            ).runs
    if not runs:
        print("no sources configured (GPUPLAN_SOURCES)")
        return 0
    print(
        tabulate(
            [(r.source, r.result, r.version, r.attempts, r.error or "") for r in runs],
            headers=["source", "result", "version", "attempts", "error"],
        )
    )
    return 1 if any(r.result in ("failed", "rejected") for r in runs) else 0


def _print_offer_history(history: OfferHistory) -> None:
    print(
        f"{history.provider} {history.instance_type} ({history.region}), {history.gpus_per_instance} x {history.gpu_id}"
    )
    print(
        tabulate(
            [
                (p.version, p.source, p.fetched_at, p.price_per_hour_usd, p.spot_price_per_hour_usd)
                for p in history.points
            ],
            headers=["version", "source", "fetched", "$/h", "spot $/h"],
        )
    )


def _cmd_history(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if args.offer:
            if isinstance(where, Store):
                history = offer_history(where, args.offer)
            else:
                history = where.get(f"/v1/offers/{quote(args.offer, safe='')}/history", OfferHistory)
            _print_offer_history(history)
            return 0
        if isinstance(where, Store):
            page = list_versions(where, source=args.source, limit=args.limit)
        else:
            params = {"limit": str(args.limit), **({"source": args.source} if args.source else {})}
            page = where.get("/v1/price-sheets", SheetVersionPage, params)
    print(
        tabulate(
            [
                (v.version, v.source, v.kind, v.format, v.rows, v.fetched_at, "yes" if v.current else "")
                for v in page.items
            ],
            headers=["version", "source", "kind", "format", "rows", "fetched", "current"],
        )
    )
    print(f"\n{len(page.items)} of {page.total} versions")
    return 0


def _cmd_providers(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if isinstance(where, Store):
            page = list_providers(where.snapshot, args.provider_class)
        else:
            classes = {"provider_class": args.provider_class} if args.provider_class else {}
            page = where.get("/v1/providers", ProviderPage, classes)
    if args.json:
        print_json(page)
        return 0
    short = [
        "storage $/GB-mo",
        "egress $/GB",
        "ingress $/GB",
        "start min",
        "download Gb/s",
        "ckpt Gb/s",
        "preempt/h",
    ]
    rows = [
        (p.provider, p.provider_class, p.offers, *(f"{p.values[f]:g}" + ("" if p.origins[f].endswith("default") else "*")
                                                   for f in page.figures))
        for p in page.items
    ]  # fmt: skip
    print(tabulate(rows, headers=["provider", "class", "offers", *short]))
    print("\n* the provider's published figure; others are its class default (GET /v1/providers cites both)")
    return 0


def register(sub: Any) -> None:
    """Add ``gpuplan prices …`` to the CLI's subparsers."""
    prices = sub.add_parser("prices", help="price sheets: import, refresh, history, providers")
    actions = prices.add_subparsers(dest="prices_command", required=True)
    imp = actions.add_parser("import", help="import a sheet file as a new version of a source")
    imp.add_argument("file")
    imp.add_argument("--source", required=True, help="source name; its offers are replaced")
    imp.add_argument("--format", required=True, choices=FORMATS)
    imp.add_argument("--provider", help="provider of every row (required for cloud_catalog_csv)")
    add_target_options(imp)
    imp.add_argument("--json", action="store_true")
    imp.set_defaults(func=_cmd_import)
    refresh = actions.add_parser("refresh", help="fetch the sources of GPUPLAN_SOURCES now")
    refresh.add_argument("--source", help="only this configured source")
    add_target_options(refresh)
    refresh.set_defaults(func=_cmd_refresh)
    history = actions.add_parser("history", help="sheet versions, or one offer's prices over time")
    history.add_argument("--source")
    history.add_argument("--offer", help="an offer id: its price in every version")
    history.add_argument("--limit", type=int, default=50)
    add_target_options(history)
    history.set_defaults(func=_cmd_history)
    providers = actions.add_parser(
        "providers", help="each provider's costs beyond the hour, as plans charge them"
    )
    providers.add_argument("--class", dest="provider_class", choices=PROVIDER_CLASSES)
    add_target_options(providers)
    providers.add_argument("--json", action="store_true")
    providers.set_defaults(func=_cmd_providers)
