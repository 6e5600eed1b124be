"""Build one rental offer from a sheet row's values: resolve its GPU name, derive what is missing."""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping

import msgspec

from pricing.errors import SheetRowError, UnresolvedGpuName
from pricing.rules.aliases import AliasTable, NameContext
from pricing.rules.interconnect import derive_interconnect
from pricing.rules.network import derive_network, network_from_sheet
from pricing.sheets.offers import RentalOffer, offer_id_for
from solver import GpuSpec, Interconnect, Network, SliceSpec, gpu_id_for, slice_id

__all__ = ["StatedOffer", "build_offer", "mig_profile_of", "resolve_gpu"]


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


def _interconnect_of(
    gpu: GpuSpec, count: int, instance_type: str, stated: Interconnect | None, mig_profile: str | None
) -> tuple[Interconnect, str]:
    """The instance's GPU interconnect and its rule: none between MIG slices, the sheet's when stated
    (checked), else derived from the GPU and the instance."""
    if mig_profile is not None:
        if stated not in (None, "none"):
            raise SheetRowError("interconnect", f"MIG slices are not linked to each other, got {stated!r}")
        return "none", f"MIG {mig_profile} slices: no GPU interconnect between slices"
    if stated is None:
        return derive_interconnect(gpu, count, instance_type)
    if count == 1 and stated != "none":
        raise SheetRowError("interconnect", f"a 1-GPU instance has no GPU interconnect, got {stated!r}")
    return stated, "stated by the sheet"


class StatedOffer(msgspec.Struct, frozen=True, kw_only=True):
    """What one sheet row states about an offer, read and checked cell by cell; the GPU it names is
    resolved apart (:func:`resolve_gpu`). ``None``: the row leaves it out (derived or unknown)."""

    provider: str
    instance_type: str
    region: str
    gpu_name: str
    count: int
    memory: float | None = None
    vcpus: float | None = None
    host_memory: float | None = None
    storage_read_gbps: float | None = None
    interconnect: Interconnect | None = None
    network_class: str | None = None
    network_gbps: str | float | None = None
    price: float | None = None
    spot: float | None = None
    reserved_1y: float | None = None
    reserved_3y: float | None = None
    increment: int
    source: str
    mig_profile: str | None = None
    available_instances: int | None = None


def _network(stated: StatedOffer, gpu: GpuSpec) -> Network:
    """The network between instances: the sheet's when stated (checked), else derived by provider."""
    derived = derive_network(
        stated.provider, stated.instance_type, gpu, stated.count, accelerator=stated.gpu_name
    )
    return network_from_sheet(
        stated.network_class, stated.network_gbps, derived, gpus_per_instance=stated.count
    )


def build_offer(stated: StatedOffer, gpu: GpuSpec) -> RentalOffer:
    """The offer of one row on ``gpu``; with a MIG profile, of ``count`` slices of ``gpu`` (never
    linked to each other: interconnect ``none``)."""
    if stated.price is None and stated.spot is None:
        raise SheetRowError("price_per_hour_usd", "neither an on-demand nor a spot price")
    s, mig = stated, stated.mig_profile
    interconnect, rule = _interconnect_of(gpu, s.count, s.instance_type, s.interconnect, mig)
    network = _network(s, gpu)
    named = s.gpu_name if mig is None else f"{s.gpu_name} MIG {mig}"
    return RentalOffer(
        offer_id=offer_id_for(s.provider, s.instance_type, s.region, named, s.count),
        provider=s.provider,
        instance_type=s.instance_type,
        region=s.region,
        gpu_id=gpu.gpu_id,
        gpu_name=s.gpu_name,
        gpus_per_instance=s.count,
        gpu_memory_gib=s.memory,
        vcpus=s.vcpus,
        host_memory_gib=s.host_memory,
        interconnect=interconnect,
        interconnect_derived=s.interconnect is None and mig is None,
        interconnect_rule=rule,
        network_class=network.network_class,
        network_gbps=network.gbps,
        network_derived=network.derived,
        network_rule=network.rule,
        price_per_hour_usd=s.price,
        spot_price_per_hour_usd=s.spot,
        billing_increment_s=s.increment,
        source=s.source,
        reserved_1y_price_per_hour_usd=s.reserved_1y,
        reserved_3y_price_per_hour_usd=s.reserved_3y,
        mig_profile=mig,
        storage_read_gbps=s.storage_read_gbps,
        available_instances=s.available_instances,
    )
