"""``gpuplan measurements import|list``: benchmark results from the command line (the same functions as
``POST``/``GET /v1/measurements``, or the server holding the database)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final, get_args

import msgspec
from tabulate import tabulate

from pricing import MeasurementFormat, UploadFacts
from service.console import print_json
from service.db.store import Store
from service.errors import InvalidParameter
from service.measurements.importer import import_measurements
from service.measurements.queries import list_measurements
from service.measurements.schemas import MeasurementOut, MeasurementPage, MeasurementUploadReport
from service.price_sheets.sources import validate_source_name
from service.server.client import add_target_options, reach

__all__ = ["register"]

_FACTS: Final = UploadFacts.__struct_fields__
"""The upload parameters, each an option (``--gpu-count`` ...)."""
_GIB: Final = frozenset({"max_memory_allocated_gib", "max_memory_reserved_gib"})
_COUNTS: Final = frozenset({"gpu_count", "tp", "replicas", "seq_len", "batch_size"})


def _print(items: list[MeasurementOut]) -> None:
    print(
        tabulate(
            [(m.version, m.source, "yes" if m.current else "no", m.kind, m.row) for m in items],
            headers=["version", "source", "current", "kind", "catalog row"],
        )
    )


def _cmd_import(args: argparse.Namespace) -> int:
    source = validate_source_name(args.source)
    try:
        body = Path(args.file).read_bytes()
    except OSError as exc:
        raise InvalidParameter("file", f"cannot read {args.file!r}: {exc.strerror}") from None
    given = {name: getattr(args, name) for name in _FACTS if getattr(args, name) is not None}
    with reach(args) as where:
        if isinstance(where, Store):
            facts = UploadFacts(**given)
            report = import_measurements(where, source=source, fmt=args.format, body=body, facts=facts)
        else:
            params = {"format": args.format, "source": source, **{k: str(v) for k, v in given.items()}}
            _, answer = where.exchange("POST", "/v1/measurements", params=params, content=body, admin=True)
            report = msgspec.json.decode(answer, type=MeasurementUploadReport)
    if args.json:
        print_json(report)
    else:
        print(
            f"{report.source}: version {report.version}, {report.rows} run(s), {report.replaced_rows} replaced"
        )
        _print(report.measurements)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if isinstance(where, Store):
            page = list_measurements(where, source=args.source, all_versions=args.history, limit=args.limit)
        else:
            params = {"limit": str(args.limit), "history": str(args.history).lower()}
            _, answer = where.exchange(
                "GET", "/v1/measurements", params=params | ({"source": args.source} if args.source else {})
            )
            page = msgspec.json.decode(answer, type=MeasurementPage)
    if args.json:
        print_json(page)
    else:
        _print(page.items)
    return 0


def register(sub: Any) -> None:
    """Add ``gpuplan measurements …`` to the CLI's subparsers."""
    measurements = sub.add_parser("measurements", help="benchmark results: import, list")
    actions = measurements.add_subparsers(dest="measurements_command", required=True)
    imp = actions.add_parser("import", help="import a benchmark result file as a new version of a source")
    imp.add_argument("file")
    imp.add_argument("--format", required=True, choices=get_args(MeasurementFormat))
    imp.add_argument("--source", required=True, help="name of these results; re-importing replaces them")
    for name in _FACTS:
        imp.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            type=int if name in _COUNTS else float if name in _GIB else str,
            help="where the file does not state it",
        )
    add_target_options(imp)
    imp.add_argument("--json", action="store_true")
    imp.set_defaults(func=_cmd_import)
    listing = actions.add_parser("list", help="the imported runs (current versions; --history: all)")
    listing.add_argument("--source")
    listing.add_argument("--history", action="store_true")
    listing.add_argument("--limit", type=int, default=100)
    add_target_options(listing)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=_cmd_list)
