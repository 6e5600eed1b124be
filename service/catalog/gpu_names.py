"""Resolve what a user typed (an id, a name or an alias) to catalog GPU ids.

Lookup ignores case, spaces, dashes and underscores (``h100-sxm``, ``H100 SXM`` and ``H100_SXM`` are
one GPU). A name whose meaning depends on context in the price sheets (``H100``, ``A100``) denotes
every GPU it can stand for, so ``?gpu=H100`` lists H100 SXM and H100 PCIe offers alike.
"""

from __future__ import annotations

import difflib
import re

from service.db.snapshot import CatalogSnapshot
from service.errors import InvalidParameter
from solver import GpuSpec

__all__ = ["compact_name", "gpu_spellings", "one_gpu", "resolve_gpu_names", "resolve_slice"]

_SEPARATORS = re.compile(r"[\s\-_./]+")


def compact_name(text: str) -> str:
    """The comparison key of a GPU name."""
    return _SEPARATORS.sub("", text.casefold())


def _index(snapshot: CatalogSnapshot) -> dict[str, set[str]]:
    by_name = {gpu.name: gpu_id for gpu_id, gpu in snapshot.gpus.items()}
    index: dict[str, set[str]] = {}
    context_free: dict[str, str] = {}
    for gpu_id, gpu in snapshot.gpus.items():
        context_free[compact_name(gpu_id)] = gpu_id
        context_free[compact_name(gpu.name)] = gpu_id
    for rule in snapshot.alias_rules:
        target = by_name.get(rule.canonical_gpu)
        if target is None:
            continue
        key = compact_name(rule.alias)
        if not rule.context:
            context_free.setdefault(key, target)
        index.setdefault(key, set()).add(target)
    for key, gpu_id in context_free.items():
        index[key] = {gpu_id}
    return index


def resolve_gpu_names(snapshot: CatalogSnapshot, text: str, *, field: str = "gpu") -> list[str]:
    """Every catalog GPU id ``text`` can denote, sorted; a 400 naming ``field`` when there is none."""
    index = _index(snapshot)
    key = compact_name(text)
    found = index.get(key) if key else None
    if not found:
        choices = sorted({*snapshot.gpus, *(g.name for g in snapshot.gpus.values())})
        close = difflib.get_close_matches(text, choices, n=5, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; GET /v1/gpus lists them"
        raise InvalidParameter(field, f"unknown GPU {text!r}{hint}", suggestions=close)
    return sorted(found)


def resolve_slice(snapshot: CatalogSnapshot, text: str) -> str | None:
    """The MIG slice ``text`` names by id or name (``b200-mig-1g-23gb``, ``B200 MIG 1g.23gb``), if any.

    Slices are not in :func:`resolve_gpu_names`' index: a GPU filter naming a whole GPU keeps meaning
    that GPU, and only the places that plan or list slices look them up here."""
    key = compact_name(text)
    for slice_id, spec in snapshot.mig_slices.items():
        if key in (compact_name(slice_id), compact_name(spec.name)):
            return slice_id
    return None


def one_gpu(snapshot: CatalogSnapshot, name: str, field: str = "gpu") -> GpuSpec:
    """Exactly one catalog GPU for ``name``; a 400 listing the variants when the alias is ambiguous."""
    ids = resolve_gpu_names(snapshot, name, field=field)
    if len(ids) > 1:
        raise InvalidParameter(
            field, f"{name!r} names several GPUs ({', '.join(ids)}); choose one", candidates=ids
        )
    return snapshot.gpus[ids[0]]


def gpu_spellings(snapshot: CatalogSnapshot, *, unique: bool = False) -> list[str]:
    """Every id, name and alias a GPU filter or field accepts, ignoring case in order; ``unique``: only
    those naming one GPU (for fields that need exactly one, such as ``/v1/throughput``'s ``gpu``)."""
    names = {*snapshot.gpus, *(g.name for g in snapshot.gpus.values())}
    names.update(rule.alias for rule in snapshot.alias_rules)
    spellings = sorted(names, key=str.casefold)
    if not unique:
        return spellings
    return [s for s in spellings if len(resolve_gpu_names(snapshot, s)) == 1]
