"""Plans: turn a request into supplies, run the planner, store the plan, and read it back.

Everything a plan needs comes from the in-memory catalog snapshot (offers, GPUs, profiles), so a
request runs no catalog query; storing the plan is one insert.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from service.errors import InvalidParameter, NotFound
from service.gpu_lookup import resolve_gpu_names
from service.plan_render import render_plan
from service.plan_schemas import PlanOut
from service.store import CatalogSnapshot, Store
from service.throughput_cache import ThroughputCache
from solver.candidates import Rejection, Supply, ThroughputFn
from solver.gpus import GpuSpec, Interconnect
from solver.plan_spec import PlanRequest
from solver.planner import plan
from solver.throughput import ThroughputEstimate, estimate_throughput
from solver.workload import ResolvedWorkload, Workload, resolve_workload

__all__ = ["PlanService", "build_rental_supplies"]


def _known_names(values: Sequence[str] | None, known: frozenset[str], field: str) -> set[str] | None:
    if values is None:
        return None
    chosen = set()
    lowered = {k.casefold(): k for k in known}
    for i, value in enumerate(values):
        match = lowered.get(value.strip().casefold())
        if match is None:
            raise InvalidParameter(
                f"{field}[{i}]", f"unknown value {value!r}; known: {', '.join(sorted(known)[:40])}"
            )
        chosen.add(match)
    return chosen


def _gpu_ids(snapshot: CatalogSnapshot, names: Sequence[str] | None, field: str) -> set[str] | None:
    if names is None:
        return None
    ids: set[str] = set()
    for i, name in enumerate(names):
        ids.update(resolve_gpu_names(snapshot, name, field=f"{field}[{i}]"))
    return ids


def build_rental_supplies(
    snapshot: CatalogSnapshot, request: PlanRequest
) -> tuple[list[Supply], list[Rejection], int]:
    """Rental supplies after the request's filters, the cheapest of each equivalent group kept.

    Offers that differ only in price (same GPU, GPUs per instance, interconnect, pricing and billing
    increment) are interchangeable for the planner: all but the cheapest are dominated and pruned.
    Returns the supplies, the filter rejections, and how many dominated offers were pruned.
    """
    limits = request.constraints
    providers = _known_names(limits.providers, snapshot.providers, "constraints.providers")
    regions = _known_names(limits.regions, snapshot.regions, "constraints.regions")
    allowed = _gpu_ids(snapshot, limits.gpus, "constraints.gpus")
    excluded = _gpu_ids(snapshot, limits.exclude_gpus, "constraints.exclude_gpus") or set()
    rejections: list[Rejection] = []
    best: dict[tuple[str, str, int, str, int], Supply] = {}
    considered = 0
    for current in snapshot.offers:
        offer = current.offer
        if allowed is not None and offer.gpu_id not in allowed:
            rejections.append(
                Rejection(gpu_id=offer.gpu_id, reason="filter", detail="not in constraints.gpus")
            )
            continue
        if offer.gpu_id in excluded:
            rejections.append(
                Rejection(gpu_id=offer.gpu_id, reason="filter", detail="in constraints.exclude_gpus")
            )
            continue
        if providers is not None and offer.provider not in providers:
            rejections.append(
                Rejection(gpu_id=offer.gpu_id, reason="filter", detail="no offer from the allowed providers")
            )
            continue
        if regions is not None and offer.region not in regions:
            rejections.append(
                Rejection(gpu_id=offer.gpu_id, reason="filter", detail="no offer in the allowed regions")
            )
            continue
        prices: list[tuple[str, float]] = []
        if offer.price_per_hour_usd is not None:
            prices.append(("on_demand", offer.price_per_hour_usd))
        if limits.spot and offer.spot_price_per_hour_usd is not None:
            prices.append(("spot", offer.spot_price_per_hour_usd))
        if not prices:
            rejections.append(
                Rejection(
                    gpu_id=offer.gpu_id,
                    reason="filter",
                    detail="spot-only offer and constraints.spot is false",
                )
            )
            continue
        for pricing, price in prices:
            considered += 1
            key = (
                pricing,
                offer.gpu_id,
                offer.gpus_per_instance,
                offer.interconnect,
                offer.billing_increment_s,
            )
            held = best.get(key)
            if held is None or price < held.usd_per_unit_hour:
                best[key] = Supply(
                    supply_id=f"{offer.offer_id}:{pricing}",
                    acquisition="rent",
                    pricing="spot" if pricing == "spot" else "on_demand",
                    gpu_id=offer.gpu_id,
                    gpus_per_unit=offer.gpus_per_instance,
                    interconnect=_interconnect(offer.interconnect),
                    usd_per_unit_hour=price,
                    billing_increment_s=offer.billing_increment_s,
                    provider=offer.provider,
                    instance_type=offer.instance_type,
                    region=offer.region,
                    price_source=f"price sheet version {current.sheet_version} ({offer.source})",
                )
    supplies = sorted(best.values(), key=lambda s: s.supply_id)
    return supplies, rejections, considered - len(supplies)


def _interconnect(text: str) -> Interconnect:
    if text == "none":
        return "none"
    if text == "pcie":
        return "pcie"
    if text == "nvlink":
        return "nvlink"
    return "nvswitch"


class PlanService:
    """Plans against one store: a throughput cache shared by requests, plans stored in the store."""

    def __init__(self, store: Store, *, time_limit_s: float = 5.0) -> None:
        self.store = store
        self.time_limit_s = time_limit_s
        self.throughput_cache = ThroughputCache()

    def _throughput_fn(self, output_len: int | None) -> ThroughputFn:
        store = self.store
        index = store.profile_index
        snapshot = store.snapshot
        cache = self.throughput_cache

        def estimate(
            workload: ResolvedWorkload, gpu: GpuSpec, gpu_count: int, interconnect: Interconnect
        ) -> ThroughputEstimate:
            key = (id(index), workload, gpu.gpu_id, gpu_count, interconnect, output_len)
            return cache.get(
                key,
                lambda: estimate_throughput(
                    workload,
                    gpu,
                    gpu_count,
                    interconnect,
                    snapshot.profiles,
                    snapshot.gpus,
                    output_len=output_len,
                    index=index,
                ),
            )

        return estimate

    def create(self, request: PlanRequest) -> PlanOut:
        """Plan ``request``, store the plan and return it."""
        started = time.perf_counter()
        snapshot = self.store.snapshot
        if request.kind == "serving":
            raise InvalidParameter(
                "kind",
                "serving fleets are sized per request rate, not per job: this endpoint plans "
                "train, fine_tune and batch_inference",
            )
        template = Workload(**_job_fields(request))  # layout fields keep defaults: the planner varies them
        resolved = resolve_workload(template)
        supplies, rejections, pruned_offers = (
            build_rental_supplies(snapshot, request)
            if request.acquisition in ("rent", "either")
            else ([], [], 0)
        )
        result = plan(
            request,
            template,
            supplies,
            snapshot.gpus,
            self._throughput_fn(request.output_len),
            seq_len=resolved.seq_len,
            pre_rejections=rejections,
            time_limit_s=self.time_limit_s,
        )
        now = datetime.now(UTC)
        plan_out = render_plan(
            plan_id=f"pl-{uuid.uuid4().hex[:16]}",
            created_at=now,
            request=request,
            resolved=resolved,
            result=result,
            snapshot=snapshot,
            pruned_offers=pruned_offers,
            total_ms=(time.perf_counter() - started) * 1000,
        )
        self._save(plan_out, request)
        return plan_out

    def _save(self, plan_out: PlanOut, request: PlanRequest) -> None:
        with self.store.cursor() as cur:
            cur.execute(
                "INSERT INTO plans VALUES (?, ?, ?, ?, ?)",
                [
                    plan_out.plan_id,
                    plan_out.created_at,
                    plan_out.kind,
                    msgspec.json.encode(request).decode(),
                    msgspec.json.encode(plan_out).decode(),
                ],
            )

    def get(self, plan_id: str) -> PlanOut:
        """A stored plan, as it was returned when it was made."""
        with self.store.cursor() as cur:
            row = cur.execute("SELECT plan FROM plans WHERE plan_id = ?", [plan_id]).fetchone()
        if row is None:
            raise NotFound(f"no plan {plan_id!r}")
        return msgspec.json.decode(row[0], type=PlanOut)


_JOB_FIELDS = Workload.__struct_fields__


def _job_fields(request: PlanRequest) -> dict[str, Any]:
    return {f: getattr(request, f) for f in _JOB_FIELDS if hasattr(request, f)}
