"""Build one rental offer from a sheet row's values: resolve its GPU name, derive what is missing."""

from __future__ import annotations

from collections.abc import Mapping

from pricing.aliases import AliasTable, NameContext
from pricing.errors import SheetRowError, UnresolvedGpuName
from pricing.interconnect import derive_interconnect
from pricing.network import derive_network, network_from_sheet
from pricing.offers import RentalOffer, offer_id_for
from solver.gpus import GpuSpec, Interconnect, gpu_id_for

__all__ = ["build_offer", "resolve_gpu"]


def resolve_gpu(
    aliases: AliasTable, gpus: Mapping[str, GpuSpec], name: str, context: NameContext, column: str
) -> GpuSpec:
    try:
        canonical = aliases.resolve(name, context)
    except UnresolvedGpuName as exc:
        raise SheetRowError(column, exc.reason) from None
    gpu = gpus.get(gpu_id_for(canonical))
    if gpu is None:
        raise SheetRowError(column, f"alias points at {canonical!r}, which is not in the GPU catalog")
    return gpu


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
    storage_read_gbps: float | None = None,
) -> RentalOffer:
    if price is None and spot is None:
        raise SheetRowError("price_per_hour_usd", "neither an on-demand nor a spot price")
    if interconnect is None:
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
    return RentalOffer(
        offer_id=offer_id_for(provider, instance_type, region, gpu_name, count),
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
        interconnect_derived=interconnect is None,
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
        storage_read_gbps=storage_read_gbps,
    )
