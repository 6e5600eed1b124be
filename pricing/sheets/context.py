"""What a sheet parser needs besides the rows: where they come from and how to resolve GPU names."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from pricing.rules.aliases import AliasTable
from solver import GpuSpec, SliceSpec

__all__ = ["SheetContext"]


class SheetContext(msgspec.Struct, frozen=True, kw_only=True):
    """What a parser needs besides the rows: where they come from and how to resolve GPU names."""

    file: str
    source: str
    provider: str | None
    aliases: AliasTable
    gpus: Mapping[str, GpuSpec]
    mig_slices: Mapping[str, SliceSpec] = msgspec.field(default_factory=dict)
    """The MIG slices a rental row's ``mig_profile`` may name, by slice id."""
