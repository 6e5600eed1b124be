"""Drop the supplies whose GPU cannot run the plan's software, once per GPU type (before enumeration).

The request's ``software`` block and what its precision, method and optimizer imply
(:func:`solver.software.needs_of`) are checked against the shipped compatibility table
(:data:`~service.catalog.software_support.SOFTWARE_INDEX`); every GPU type that fails leaves one
rejection with the reason ``software`` naming the missing piece. Rented and owned supplies alike, for
job plans and serving fleets: both read the pipeline's supplies.
"""

from __future__ import annotations

import msgspec

from service.catalog.software_support import SOFTWARE_INDEX
from service.db.snapshot import CatalogSnapshot
from service.plans.supply import SupplySet
from solver.candidates import Rejection
from solver.plan_spec import PlanRequest
from solver.software import needs_of
from solver.workload import ResolvedWorkload

__all__ = ["software_filter"]


def software_filter(
    snapshot: CatalogSnapshot, request: PlanRequest, resolved: ResolvedWorkload, supplies: SupplySet
) -> SupplySet:
    """``supplies`` without those whose GPU cannot run the job's software, with a rejection per GPU."""
    spec = request.software
    needs = needs_of(spec, resolved)
    stack = "any" if spec is None else spec.stack
    if not needs and stack == "any":
        return supplies
    index = snapshot.derive(SOFTWARE_INDEX)
    verdicts: dict[str, str | None] = {}
    rejections = list(supplies.rejections)
    kept = []
    for supply in supplies.supplies:
        gpu_id = supply.gpu_id
        if gpu_id not in verdicts:
            why = verdicts[gpu_id] = index.missing(snapshot.gpus[gpu_id], needs, stack)
            if why is not None:
                rejections.append(Rejection(gpu_id=gpu_id, reason="software", detail=why))
        if verdicts[gpu_id] is None:
            kept.append(supply)
    return msgspec.structs.replace(supplies, supplies=kept, rejections=rejections)
