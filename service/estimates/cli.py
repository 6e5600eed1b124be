"""``gpuplan throughput body.json`` and ``gpuplan memory body.json``: the POST /v1/throughput and
POST /v1/memory estimates from a JSON file (or ``-`` for stdin), through the same code as the API."""

from __future__ import annotations

import argparse
from typing import Any

from tabulate import tabulate

from service.console import print_json, print_table, read_json_body
from service.db.store import Store
from service.estimates.memory import estimate_memory_for
from service.estimates.schemas import (
    MemoryRequest,
    MemoryResponse,
    ServingAtLoad,
    ThroughputRequest,
    ThroughputResponse,
)
from service.estimates.throughput import estimate_throughput_for
from service.server.client import add_target_options, reach
from solver import Percentiles

__all__ = ["register"]


def _throughput_rows(result: ThroughputResponse) -> list[tuple[str, Any]]:
    efficiency, network = result.efficiency, result.network
    rows: list[tuple[str, Any]] = [
        ("model", result.model),
        (
            "on",
            f"{result.gpu_count} x {result.gpu}, {result.gpus_per_instance} per instance, "
            f"{result.interconnect} inside"
            + (" (derived)" if result.interconnect_derived else "")
            + (
                f", {network.network_class} {network.gbps:g} Gbit/s between"
                if network.network_class != "none"
                else ""
            ),
        ),
        (
            "throughput",
            f"{result.value:,.1f} {result.unit} (likely {result.band.low:,.1f}-{result.band.high:,.1f})",
        ),
        (
            "how",
            f"{result.provenance} via {result.route}: {result.workload_class} on {result.stack}, "
            f"{result.confidence} confidence ({result.confidence_score:.2f})",
        ),
        (
            "efficiency",
            ", ".join(
                f"{name} {value:.3f}"
                for name, value in (
                    ("class", efficiency.class_efficiency),
                    ("MFU", efficiency.mfu),
                    ("bandwidth", efficiency.bandwidth_utilization),
                )
                if value is not None
            )
            + f" ({efficiency.basis})",
        ),
    ]
    if result.scaling is not None:
        scaling = result.scaling
        rows.append(
            (
                "scaling",
                f"{scaling.efficiency:.0%} of linear, {scaling.communication_fraction:.0%} communicating, "
                f"bound by {scaling.bottleneck.replace('_', ' ')}",
            )
        )
    if result.serving is not None:
        rows += _serving_rows(result.serving)
    rows.append(("method", result.method))
    rows += [("source", f"{s.source} ({s.profile_id})") for s in result.sources[:5]]
    return rows


def _serving_rows(serving: ServingAtLoad) -> list[tuple[str, Any]]:
    """The engine model's figures at the load (``kind: serving`` with request sizes)."""
    name, value = serving.load.mode()
    load = "offline (all queued)" if name == "offline" else f"{name.replace('_', ' ')} {value:g}"

    def ms(p: Percentiles) -> str:
        return f"p50 {p.p50:,.1f}, p90 {p.p90:,.1f}, p99 {p.p99:,.1f} ms"

    return [
        (
            "load",
            f"{load} on {serving.replicas} replica(s) of tp {serving.tp} ({serving.engine})"
            + ("" if serving.stable else ": NOT sustained, the queue grows"),
        ),
        (
            "requests",
            f"{serving.requests_per_s:,.2f}/s, {serving.total_tokens_per_s:,.0f} tokens/s in and out",
        ),
        ("TTFT", ms(serving.ttft_ms)),
        ("TPOT", ms(serving.tpot_ms)),
        ("end to end", ms(serving.e2e_ms)),
        (
            "engine",
            f"KV cache {serving.kv_cache_tokens:,} tokens, up to {serving.max_batch} sequences, "
            f"{serving.token_budget:,} tokens a step",
        ),
    ]


def _cmd_throughput(args: argparse.Namespace) -> int:
    request = read_json_body(args.body, ThroughputRequest, "body")
    with reach(args) as where:
        if isinstance(where, Store):
            result = estimate_throughput_for(where.snapshot, request)
        else:
            result = where.post("/v1/throughput", ThroughputResponse, request)
    if args.json:
        print_json(result)
    else:
        print(tabulate(_throughput_rows(result), tablefmt="plain"))
    return 0


def _print_memory(result: MemoryResponse, top: int) -> None:
    rows: list[tuple[str, Any]] = [
        ("model", f"{result.model} ({result.kind}), {result.gpu_count} GPU(s), tp={result.tp}"),
        ("sequence", f"{result.seq_len} tokens, recompute={result.recompute}"),
        (
            "per GPU",
            f"{result.per_gpu_gib:,.2f} GiB as nvidia-smi shows it "
            f"(likely {result.band.low_gib:,.2f}-{result.band.high_gib:,.2f}); peak at {result.peak_phase}",
        ),
        ("allocated", f"{result.allocated_gib:,.2f} GiB (torch max allocated)"),
        ("reserved", f"{result.reserved_gib:,.2f} GiB (torch max reserved)"),
        ("host RAM", f"{result.host_ram_gib:,.2f} GiB"),
    ]
    print(tabulate(rows, tablefmt="plain"))
    print()
    print_table(
        [
            (fit.gpu_id, fit.capacity_gib, round(fit.margin_gib, 2), fit.fits, fit.high_end_fits)
            for fit in result.fits[:top]
        ],
        headers=["GPU", "GiB", "margin GiB", "fits", "band's high end fits"],
    )
    if len(result.fits) > top:
        print(f"({len(result.fits) - top} more GPUs; --top to show them, --json for everything)")


def _cmd_memory(args: argparse.Namespace) -> int:
    request = read_json_body(args.body, MemoryRequest, "body")
    with reach(args) as where:
        if isinstance(where, Store):
            result = estimate_memory_for(where.snapshot, request)
        else:
            result = where.post("/v1/memory", MemoryResponse, request)
    if args.json:
        print_json(result)
    else:
        _print_memory(result, args.top)
    return 0


def register(sub: Any) -> None:
    """Add the ``throughput`` and ``memory`` subcommands to the CLI's subparsers."""
    throughput = sub.add_parser(
        "throughput",
        help="estimate a workload's throughput on one GPU type (a POST /v1/throughput JSON body; - for stdin)",
    )
    throughput.add_argument("body", help="JSON file: the workload, gpu, gpu_count and optional topology")
    add_target_options(throughput)
    throughput.add_argument("--json", action="store_true", help="print the API's JSON answer")
    throughput.set_defaults(func=_cmd_throughput)
    memory = sub.add_parser(
        "memory", help="estimate a workload's per-GPU memory (a POST /v1/memory JSON body; - for stdin)"
    )
    memory.add_argument("body", help="JSON file: the workload and optionally one gpu to check")
    add_target_options(memory)
    memory.add_argument("--json", action="store_true", help="print the API's JSON answer")
    memory.add_argument("--top", type=int, default=10, help="GPUs to list, largest margin first (default 10)")
    memory.set_defaults(func=_cmd_memory)
