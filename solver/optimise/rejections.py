"""Why GPU types cannot be used, gathered per GPU type: one rejection per reason, the most telling one.

Job plans and serving fleets explain themselves the same way: every GPU type with no usable supply
gets its distinct reasons (the instance of each reason that tried the most GPUs), MIG slices are told
under their parent GPU, and a GPU nothing offers says so. Supplies a GPU cannot run at the job's
precision are refused here too, with reason ``precision``, before any enumeration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from solver.catalog.gpus import GpuSpec
from solver.catalog.mig import SliceSpec
from solver.catalog.precisions import precision_refusal
from solver.errors import Rejection
from solver.optimise.candidates import Supply

__all__ = ["NOTHING_OFFERED", "by_gpu", "refuse_precision"]

NOTHING_OFFERED = "no current offer or ownership price"
"""The detail of a GPU type with no supply at all."""


def _as_parent(rejection: Rejection, gpus: Mapping[str, GpuSpec], usable: set[str]) -> Rejection | None:
    """A MIG slice's rejection told under its parent GPU (``None`` when the parent, or another
    slice of it, is usable: then the slice's failure explains nothing)."""
    spec = gpus.get(rejection.gpu_id)
    if not isinstance(spec, SliceSpec):
        return rejection
    if spec.parent_gpu_id in usable:
        return None
    detail = f"MIG {spec.mig_profile}: {rejection.detail}"
    return msgspec.structs.replace(rejection, gpu_id=spec.parent_gpu_id, detail=detail)


def by_gpu(
    gpus: Mapping[str, GpuSpec], usable: set[str], rejections: Iterable[Rejection]
) -> dict[str, list[Rejection]]:
    """For every GPU type of ``gpus`` (whole GPUs and MIG slices) that is not ``usable``: its distinct
    reasons, sorted by reason, each the instance that tried the most GPUs (the first on a tie).

    A usable slice makes its parent usable; an unusable slice's reasons count under its parent only
    where the parent has none of that kind."""
    usable = usable | {g.parent_gpu_id for k, g in gpus.items() if k in usable and isinstance(g, SliceSpec)}
    grouped: dict[str, dict[str, Rejection]] = {}
    folded: list[Rejection] = []
    for rejection in rejections:
        if isinstance(gpus.get(rejection.gpu_id), SliceSpec):
            as_parent = _as_parent(rejection, gpus, usable)
            if as_parent is not None:
                folded.append(as_parent)
        elif rejection.gpu_id not in usable:
            reasons = grouped.setdefault(rejection.gpu_id, {})
            held = reasons.get(rejection.reason)
            if held is None or rejection.gpu_count > held.gpu_count:
                reasons[rejection.reason] = rejection
    for rejection in folded:
        grouped.setdefault(rejection.gpu_id, {}).setdefault(rejection.reason, rejection)
    for gpu_id, gpu in gpus.items():
        if gpu_id not in usable and gpu_id not in grouped and not isinstance(gpu, SliceSpec):
            grouped[gpu_id] = {"filter": Rejection(gpu_id=gpu_id, reason="filter", detail=NOTHING_OFFERED)}
    return {gpu_id: [r for _, r in sorted(reasons.items())] for gpu_id, reasons in sorted(grouped.items())}


def refuse_precision(
    supplies: Sequence[Supply], gpus: Mapping[str, GpuSpec], precision: str, *, training: bool
) -> tuple[list[Supply], list[Rejection]]:
    """The supplies whose GPU computes in a format ``precision`` needs, and a ``precision`` rejection
    (naming what the GPU runs) for each GPU type that does not."""
    kept: list[Supply] = []
    refused: dict[str, Rejection] = {}
    verdicts: dict[str, str | None] = {}
    for supply in supplies:
        gpu_id = supply.gpu_id
        if gpu_id not in verdicts:
            verdicts[gpu_id] = precision_refusal(gpus[gpu_id], precision, training=training)
        why = verdicts[gpu_id]
        if why is None:
            kept.append(supply)
        else:
            refused.setdefault(gpu_id, Rejection(gpu_id=gpu_id, reason="precision", detail=why))
    return kept, list(refused.values())
