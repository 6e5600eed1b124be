"""The catalog facts of a shipped GPU row, for tests that build a :class:`GpuSpec` by hand."""

from __future__ import annotations

import functools
from typing import Any

from service.db.seed_files import read_gpu_specs
from solver.catalog.gpus import GpuSpec

__all__ = ["facts"]


@functools.cache
def _shipped() -> dict[str, GpuSpec]:
    return {gpu.gpu_id: gpu for gpu in read_gpu_specs()}


def facts(like: str, **overrides: Any) -> dict[str, Any]:
    """Architecture, family, NVLink domain and formats of the shipped row ``like`` (``KeyError`` when
    the catalog has no such GPU), with ``overrides`` on top."""
    gpu = _shipped()[like]
    found: dict[str, Any] = {
        "architecture": gpu.architecture,
        "family": gpu.family,
        "nvlink_domain": gpu.nvlink_domain,
        "precisions": gpu.precisions,
    }
    return {**found, **overrides}
