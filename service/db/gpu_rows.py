"""The ``gpus`` table's rows and the catalog's :class:`~solver.catalog.gpus.GpuSpec`, both ways.

A row's ``precisions`` is stored as its formats joined by spaces (``"fp32 fp16 bf16"``). A row read
back is validated as it is built: one without its architecture, family, NVLink domain or formats (a
store seeded before they existed) raises, naming the GPU and the field, instead of planning on a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from solver import GpuSpec

__all__ = ["GPU_COLUMNS", "gpu_from_row", "gpu_row"]

GPU_COLUMNS: Final[tuple[str, ...]] = GpuSpec.__struct_fields__


def gpu_row(gpu: GpuSpec) -> tuple[Any, ...]:
    """``gpu`` as a row of the ``gpus`` table, in :data:`GPU_COLUMNS` order."""
    return tuple(
        " ".join(value) if name == "precisions" else value
        for name, value in zip(GPU_COLUMNS, msgspec.structs.astuple(gpu), strict=True)
    )


def gpu_from_row(row: Sequence[Any]) -> GpuSpec:
    """A row of the ``gpus`` table (:data:`GPU_COLUMNS` order) as a validated :class:`GpuSpec`."""
    fields = dict(zip(GPU_COLUMNS, row, strict=True))
    precisions = fields["precisions"]
    fields["precisions"] = None if precisions is None else precisions.split()
    try:
        return msgspec.convert(fields, GpuSpec)
    except msgspec.ValidationError as exc:
        raise ValueError(f"stored GPU {fields.get('gpu_id')!r}: {exc}") from None
