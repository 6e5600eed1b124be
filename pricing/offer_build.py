"""Build one rental offer from a sheet row's values: resolve its GPU name, derive what is missing."""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping

from pricing.aliases import AliasTable, NameContext
from pricing.errors import SheetRowError, UnresolvedGpuName
from pricing.interconnect import derive_interconnect
from pricing.network import derive_network, network_from_sheet
from pricing.offers import RentalOffer, offer_id_for
from solver.gpus import GpuSpec, Interconnect, gpu_id_for
from solver.mig import SliceSpec, slice_id

__all__ = ["build_offer", "mig_profile_of", "resolve_gpu"]


_SEPARATORS = re.compile(r"[\s\-_./]+")
_KEYS: weakref.WeakKeyDictionary[AliasTable, dict[str, str]] = weakref.WeakKeyDictionary()


def _compact(text: str) -> str:
    return _SEPARATORS.sub("", text.casefold())


def _catalog_keys(aliases: AliasTable, gpus: Mapping[str, GpuSpec]) -> dict[str, str]:
    """Compact spelling → GPU id for every id, name and alias that means one GPU whatever the row
    (``h100-sxm``, ``H100_SXM``, context-free aliases), built once per table."""
    keys = _KEYS.get(aliases)
    if keys is None:
        by_name = {gpu.name: gpu_id for gpu_id, gpu in gpus.items()}
        seen: dict[str, set[str]] = {}
        for rule in aliases.rules():  # a rule with a context holds only where its context does
            if rule.canonical_gpu in by_name and not rule.context.strip():
                seen.setdefault(_compact(rule.alias), set()).add(by_name[rule.canonical_gpu])
        keys = {key: ids.pop() for key, ids in seen.items() if len(ids) == 1}
        for gpu_id, gpu in gpus.items():
            keys[_compact(gpu_id)] = keys[_compact(gpu.name)] = gpu_id
        _KEYS[aliases] = keys
    return keys


def _advice(aliases: AliasTable, gpus: Mapping[str, GpuSpec], name: str, reason: str) -> str:
    """``reason`` with what to write instead: the GPUs a name whose rules did not settle this row can
    mean, by name and id."""
    meanings = aliases.meanings(name)
    if not meanings:
        return reason
    ids = {gpu.name: gpu_id for gpu_id, gpu in gpus.items()}
    listed = ", ".join(f"{m!r} ({ids[m]})" if m in ids else repr(m) for m in meanings)
    return f"{reason}; {name!r} can mean {listed}: write one of those names or ids instead"


def resolve_gpu(
    aliases: AliasTable, gpus: Mapping[str, GpuSpec], name: str, context: NameContext, column: str
) -> GpuSpec:
    """The catalog GPU a sheet's cell names: through the alias table's rules for this row, else by a
    catalog id, name or alias that means one GPU (ignoring case and separators)."""
    try:
        canonical = aliases.resolve(name, context)
    except UnresolvedGpuName as exc:
        gpu_id = _catalog_keys(aliases, gpus).get(_compact(name))
        if gpu_id is not None:
            return gpus[gpu_id]
        raise SheetRowError(column, _advice(aliases, gpus, name, exc.reason)) from None
    gpu = gpus.get(gpu_id_for(canonical))
    if gpu is None:
        raise SheetRowError(column, f"alias points at {canonical!r}, which is not in the GPU catalog")
    return gpu


def mig_profile_of(gpu: GpuSpec, text: str, slices: Mapping[str, SliceSpec]) -> str | None:
    """The MIG profile a sheet's ``mig_profile`` cell names for ``gpu`` (``MIG 1g.10gb`` and
    ``1g.10gb`` alike; ``None`` when empty), or a row problem naming the column when ``gpu`` has no
    such profile."""
    profile = text.strip().lower().removeprefix("mig").strip(" -_")
    if not profile:
        return None
    if slice_id(gpu.gpu_id, profile) not in slices:
        known = sorted(s.mig_profile for s in slices.values() if s.parent_gpu_id == gpu.gpu_id)
        listed = f"its profiles: {', '.join(known)}" if known else "it has no MIG profiles"
        raise SheetRowError("mig_profile", f"{gpu.name} has no MIG profile {text.strip()!r}; {listed}")
    return profile


def build_offer(
    *,
    provider: str,
    instance_type: str,
    region: str,
    gpu_name: str,
    gpu: GpuSpec,
    count: int,
    memory: float | None,
    vcpus: float | None,
    host_memory: float | None,
    interconnect: Interconnect | None,
    network_class: str | None = None,
    network_gbps: str | float | None = None,
    price: float | None,
    spot: float | None,
    reserved_1y: float | None,
    reserved_3y: float | None,
    increment: int,
    source: str,
    mig_profile: str | None = None,
    storage_read_gbps: float | None = None,
) -> RentalOffer:
    """The offer of one row; with ``mig_profile``, of ``count`` MIG slices of ``gpu`` (never linked to
    each other: interconnect ``none``)."""
    if price is None and spot is None:
        raise SheetRowError("price_per_hour_usd", "neither an on-demand nor a spot price")
    derived: Interconnect
    if mig_profile is not None:
        if interconnect not in (None, "none"):
            raise SheetRowError(
                "interconnect", f"MIG slices are not linked to each other, got {interconnect!r}"
            )
        derived, rule = "none", f"MIG {mig_profile} slices: no GPU interconnect between slices"
    elif interconnect is None:
        derived, rule = derive_interconnect(gpu, count, instance_type)
    else:
        if count == 1 and interconnect != "none":
            raise SheetRowError(
                "interconnect", f"a 1-GPU instance has no GPU interconnect, got {interconnect!r}"
            )
        derived, rule = interconnect, "stated by the sheet"
    network = network_from_sheet(
        network_class,
        network_gbps,
        derive_network(provider, instance_type, gpu, count, accelerator=gpu_name),
        gpus_per_instance=count,
    )
    named = gpu_name if mig_profile is None else f"{gpu_name} MIG {mig_profile}"
    return RentalOffer(
        offer_id=offer_id_for(provider, instance_type, region, named, count),
        provider=provider,
        instance_type=instance_type,
        region=region,
        gpu_id=gpu.gpu_id,
        gpu_name=gpu_name,
        gpus_per_instance=count,
        gpu_memory_gib=memory,
        vcpus=vcpus,
        host_memory_gib=host_memory,
        interconnect=derived,
        interconnect_derived=interconnect is None and mig_profile is None,
        interconnect_rule=rule,
        network_class=network.network_class,
        network_gbps=network.gbps,
        network_derived=network.derived,
        network_rule=network.rule,
        price_per_hour_usd=price,
        spot_price_per_hour_usd=spot,
        billing_increment_s=increment,
        source=source,
        reserved_1y_price_per_hour_usd=reserved_1y,
        reserved_3y_price_per_hour_usd=reserved_3y,
        mig_profile=mig_profile,
        storage_read_gbps=storage_read_gbps,
    )
