"""GET /v1/providers: every provider of the current offers (and owned GPUs) with the costs a plan
charges beyond the instance-hour, resolved from the provider-cost sheets, each figure with its origin."""

from __future__ import annotations

from typing import Annotated, Final

import msgspec
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from pricing import COST_FIELDS, OWNED_PROVIDER, ProviderClass
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.problems import FeatureRoutes

__all__ = ["ProviderCostOut", "ProviderPage", "list_providers", "list_providers_handler"]

_API = FeatureRoutes("prices")


class ProviderCostOut(msgspec.Struct, kw_only=True):
    """One provider's costs beyond the hour: ``values`` per figure, ``origins`` whose figure each is
    (the provider's published one or its class default), ``citation`` the sheet rows' sources."""

    provider: str
    provider_class: ProviderClass
    offers: int
    values: dict[str, float]
    origins: dict[str, str]
    citation: str


class ProviderPage(msgspec.Struct, kw_only=True):
    items: list[ProviderCostOut]
    total: int
    figures: list[str]
    """The figures every item has, in order."""


_FIGURES: Final = list(COST_FIELDS)


def list_providers(snapshot: CatalogSnapshot, provider_class: ProviderClass | None = None) -> ProviderPage:
    """Providers of current offers, then ``owned``, alphabetically; those no cost sheet covers are left out."""
    counts = snapshot.offer_counts
    items = []
    for name in [*sorted(counts), OWNED_PROVIDER]:
        resolved = snapshot.provider_costs.resolve(name)
        if resolved is None or (provider_class is not None and resolved.provider_class != provider_class):
            continue
        items.append(
            ProviderCostOut(
                provider=name,
                provider_class=resolved.provider_class,
                offers=counts.get(name, 0),
                values=resolved.values,
                origins=resolved.sources,
                citation=resolved.citation,
            )
        )
    return ProviderPage(items=items, total=len(items), figures=_FIGURES)


@_API.get("/providers", operation_id="listProviders", sync_to_thread=False)
def list_providers_handler(
    store: NamedDependency[Store],
    provider_class: Annotated[
        ProviderClass | None, QueryParameter(description="Only providers of this class")
    ] = None,
) -> ProviderPage:
    """Each provider's storage, egress and ingress prices, start-up time, download and checkpoint-write
    rates and spot preemption rate, as plans charge them (provider-cost sheets, class defaults filling
    the gaps)."""
    return list_providers(store.snapshot, provider_class)
