"""Drop the supplies whose GPU cannot run the plan's software, once per GPU type (before enumeration).

The request's ``software`` block and what its precision, method and optimizer imply
(:func:`solver.spec.software.needs_of`) are checked against the shipped compatibility table
(:data:`~service.catalog.software_support.SOFTWARE_INDEX`); every GPU type that fails leaves one
rejection with the reason ``software`` naming the missing piece. Rented and owned supplies alike, for
job plans and serving fleets: both read the pipeline's supplies. A MIG slice runs what its parent GPU
runs: it is judged, and rejected, as its parent (slices are not in ``snapshot.gpus``).
"""

from __future__ import annotations

import msgspec

from service.catalog.software_support import SOFTWARE_INDEX
from service.db.snapshot import CatalogSnapshot
from service.plans.supply import SupplySet
from solver import PlanBase, Rejection, ResolvedWorkload, needs_of

__all__ = ["software_filter"]


def software_filter(
    snapshot: CatalogSnapshot, request: PlanBase, resolved: ResolvedWorkload, supplies: SupplySet
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
        gpu_id = _whole_gpu(snapshot, supply.gpu_id)
        if gpu_id not in verdicts:
            why = verdicts[gpu_id] = index.missing(snapshot.gpus[gpu_id], needs, stack)
            if why is not None:
                rejections.append(Rejection(gpu_id=gpu_id, reason="software", detail=why))
        if verdicts[gpu_id] is None:
            kept.append(supply)
    return msgspec.structs.replace(supplies, supplies=kept, rejections=rejections)


def _whole_gpu(snapshot: CatalogSnapshot, gpu_id: str) -> str:
    """``gpu_id``, or the parent GPU's id when it names a MIG slice."""
    found = snapshot.mig_slices.get(gpu_id)
    return gpu_id if found is None else found.parent_gpu_id
