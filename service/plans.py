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

from service.catalog.gpu_names import resolve_gpu_names
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import InvalidParameter, NotFound
from service.owned_supply import OWNED_SUPPLIES
from service.plan_render import render_plan
from service.plan_schemas import AnyPlan
from service.serving_plans import plan_fleet
from service.supply_index import SUPPLY_INDEX, SupplyIndex
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
    snapshot: CatalogSnapshot, index: SupplyIndex, request: PlanRequest
) -> tuple[list[Supply], list[Rejection], int]:
    """Rental supplies after the request's filters: the cheapest passing offer of each group.

    Returns the supplies, the filter rejections (one per GPU and reason), and how many offers were
    passed over (a cheaper interchangeable offer was kept, or they failed a filter).
    """
    limits = request.constraints
    providers = _known_names(limits.providers, snapshot.providers, "constraints.providers")
    regions = _known_names(limits.regions, snapshot.regions, "constraints.regions")
    allowed = _gpu_ids(snapshot, limits.gpus, "constraints.gpus")
    excluded = _gpu_ids(snapshot, limits.exclude_gpus, "constraints.exclude_gpus") or set()
    rejections: dict[tuple[str, str], Rejection] = {}

    def reject(gpu_id: str, detail: str) -> None:
        rejections.setdefault((gpu_id, detail), Rejection(gpu_id=gpu_id, reason="filter", detail=detail))

    supplies: list[Supply] = []
    dominated = 0
    for group in index.groups:
        if allowed is not None and group.gpu_id not in allowed:
            reject(group.gpu_id, "not in constraints.gpus")
            continue
        if group.gpu_id in excluded:
            reject(group.gpu_id, "in constraints.exclude_gpus")
            continue
        if group.pricing == "spot" and not limits.spot:
            if group.gpu_id in index.spot_only_gpus:
                reject(group.gpu_id, "only spot offers and constraints.spot is false")
            continue
        first = next(
            (
                (price, current)
                for price, current in group.offers
                if (providers is None or current.offer.provider in providers)
                and (regions is None or current.offer.region in regions)
            ),
            None,
        )
        if first is None:
            reject(group.gpu_id, "no offer from the allowed providers and regions")
            continue
        dominated += len(group.offers) - 1  # interchangeable offers passed over (dearer or filtered out)
        price, current = first
        offer = current.offer
        supplies.append(
            Supply(
                supply_id=f"{offer.offer_id}:{group.pricing}",
                acquisition="rent",
                pricing="spot" if group.pricing == "spot" else "on_demand",
                gpu_id=offer.gpu_id,
                gpus_per_unit=offer.gpus_per_instance,
                interconnect=_interconnect(offer.interconnect),
                usd_per_unit_hour=price,
                billing_increment_s=offer.billing_increment_s,
                provider=offer.provider,
                instance_type=offer.instance_type,
                region=offer.region,
                price_source=f"price sheet version {current.sheet_version} ({offer.source})",
                sheet_version=current.sheet_version,
            )
        )
    return supplies, list(rejections.values()), dominated


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

    def __init__(
        self, store: Store, *, time_limit_s: float = 5.0, price_max_age_hours: float = 24 * 30
    ) -> None:
        self.store = store
        self.time_limit_s = time_limit_s
        self.price_max_age_hours = price_max_age_hours
        self.throughput_cache = ThroughputCache()

    def _throughput_fn(self, snapshot: CatalogSnapshot, output_len: int | None) -> ThroughputFn:
        index = snapshot.profile_index()
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

    def create(self, request: PlanRequest) -> AnyPlan:
        """Plan ``request``, store the plan and return it."""
        started = time.perf_counter()
        snapshot = self.store.snapshot
        template = Workload(**_job_fields(request))  # layout fields keep defaults: the planner varies them
        resolved = resolve_workload(template)
        supplies, rejections, pruned_offers = (
            build_rental_supplies(snapshot, snapshot.derive(SUPPLY_INDEX), request)
            if request.acquisition in ("rent", "either")
            else ([], [], 0)
        )
        if request.acquisition in ("own", "either"):
            owned, owned_rejections = self._owned(snapshot, request)
            supplies = [*supplies, *owned]
            rejections = [*rejections, *owned_rejections]
        if request.kind == "serving":
            fleet = plan_fleet(
                self.store,
                snapshot,
                request,
                template,
                supplies,
                rejections,
                time_limit_s=self.time_limit_s,
                price_max_age_hours=self.price_max_age_hours,
            )
            self._save(fleet, request)
            return fleet
        result = plan(
            request,
            template,
            supplies,
            snapshot.gpus,
            self._throughput_fn(snapshot, request.output_len),
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
            price_max_age_hours=self.price_max_age_hours,
            total_ms=(time.perf_counter() - started) * 1000,
        )
        self._save(plan_out, request)
        return plan_out

    def _owned(self, snapshot: CatalogSnapshot, request: PlanRequest) -> tuple[list[Supply], list[Rejection]]:
        """Owned supplies (cached per snapshot and utilisation), after the request's GPU filters."""
        supplies, rejections = snapshot.derive(OWNED_SUPPLIES).at(request.owned_utilization)
        allowed = _gpu_ids(snapshot, request.constraints.gpus, "constraints.gpus")
        excluded = _gpu_ids(snapshot, request.constraints.exclude_gpus, "constraints.exclude_gpus") or set()
        kept = [s for s in supplies if (allowed is None or s.gpu_id in allowed) and s.gpu_id not in excluded]
        return kept, list(rejections)

    def _save(self, plan_out: AnyPlan, request: PlanRequest) -> None:
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

    def get(self, plan_id: str) -> AnyPlan:
        """A stored plan, as it was returned when it was made."""
        with self.store.cursor() as cur:
            row = cur.execute("SELECT plan FROM plans WHERE plan_id = ?", [plan_id]).fetchone()
        if row is None:
            raise NotFound(f"no plan {plan_id!r}")
        plan: AnyPlan = msgspec.json.decode(row[0], type=AnyPlan)
        return plan


_JOB_FIELDS = Workload.__struct_fields__


def _job_fields(request: PlanRequest) -> dict[str, Any]:
    return {f: getattr(request, f) for f in _JOB_FIELDS if hasattr(request, f)}
