"""Interruption rates: the cluster rate per GPU generation, and a marketplace host's stated assumption."""

from __future__ import annotations

import pytest

from solver.catalog.providers import PROVIDER_CLASS_OF, ProviderClass, provider_class
from solver.costs.reliability import INTERRUPTION_RATES, MARKETPLACE_RATE_MULTIPLE, interruption_rate


def test_operated_capacity_keeps_the_published_cluster_rate() -> None:
    kinds: tuple[ProviderClass | None, ...] = (None, "hyperscaler", "neocloud", "owned")
    for kind in kinds:
        row = interruption_rate("hopper", kind)
        assert row is INTERRUPTION_RATES[0] and not row.assumed
    assert interruption_rate("ampere", "neocloud") is INTERRUPTION_RATES[1]


@pytest.mark.parametrize("generation", ["hopper", "blackwell", "ampere", "ada", None])
def test_a_marketplace_host_is_a_stated_multiple_of_its_generations_cluster_rate(
    generation: str | None,
) -> None:
    cluster = interruption_rate(generation)
    market = interruption_rate(generation, "marketplace")
    assert market.per_gpu_hour == pytest.approx(MARKETPLACE_RATE_MULTIPLE * cluster.per_gpu_hour)
    assert market.per_gpu_hour > cluster.per_gpu_hour
    assert market.assumed and "ASSUMPTION" in market.citation and "ASSUMPTION" in market.source
    assert market.network_share == cluster.network_share and market.generations == cluster.generations


def test_the_class_comes_from_the_shared_table() -> None:
    """Issue 24's marketplaces are marketplaces; an unknown provider assumes the least; owned is owned."""
    for name in ("vast", "lium", "spheron", "primeintellect", "hyperbolic", "yotta", "shadeform"):
        assert provider_class(name) == "marketplace"
    assert provider_class("Lium ") == "marketplace"
    assert provider_class("somecloud") == "marketplace"
    assert provider_class("aws") == "hyperscaler" and provider_class("nebius") == "neocloud"
    assert provider_class(None) == provider_class("owned") == "owned"
    assert set(PROVIDER_CLASS_OF.values()) == {"hyperscaler", "neocloud", "marketplace", "owned"}
