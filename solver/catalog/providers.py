"""Which kind of seller each provider is: the one table the network rule and the reliability rule read.

A provider's class decides what may be assumed about its offers where the offer itself says nothing:
whether separate instances share a network (``pricing.rules.network``) and how often a job on them is
interrupted (``solver.costs.reliability``). Both rules read this table so that they can never disagree
about a provider. It lives in ``solver`` because the reliability rule does (solver imports nothing
above it); ``pricing`` reads it through the face.

Classes (``ProviderClass``):

* ``hyperscaler`` — a general-purpose cloud: every VM sits in a VPC the account owns.
* ``neocloud`` — runs the GPU fleet it sells (data-centre hardware it operates).
* ``marketplace`` — sells other parties' GPUs: a market, broker or aggregator. Each rental is an
  independent container or VM on some host; two rentals need not be in the same data centre.
* ``owned`` — hardware the user bought (``OWNED_PROVIDER``).

The assignments follow ``service/data/README-provider_costs.md`` (the provider-costs sheet's classes,
with their sources; ``tests/pricing/sheets`` checks that the shipped sheet agrees with this table).
A provider this table does not know is taken as a ``marketplace``: nothing about its network or its
hosts' reliability is documented, so nothing better may be assumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

__all__ = [
    "OWNED_PROVIDER",
    "PROVIDER_CLASSES",
    "PROVIDER_CLASS_OF",
    "UNKNOWN_PROVIDER_CLASS",
    "ProviderClass",
    "provider_class",
]

ProviderClass = Literal["hyperscaler", "neocloud", "marketplace", "owned"]
"""What kind of seller a provider is (see the module docstring)."""

PROVIDER_CLASSES: Final[tuple[ProviderClass, ...]] = ("hyperscaler", "neocloud", "marketplace", "owned")

OWNED_PROVIDER: Final = "owned"
"""The provider name owned GPUs are known by."""

UNKNOWN_PROVIDER_CLASS: Final[ProviderClass] = "marketplace"
"""The class of a provider the table does not list: the one that assumes the least."""

PROVIDER_CLASS_OF: Final[Mapping[str, ProviderClass]] = {
    "aws": "hyperscaler",
    "gcp": "hyperscaler",
    "azure": "hyperscaler",
    "oci": "hyperscaler",
    "lambda": "neocloud",
    "nebius": "neocloud",
    "coreweave": "neocloud",
    "hyperstack": "neocloud",
    "runpod": "neocloud",
    "verda": "neocloud",
    # Classed as the provider-costs README does; not verified against the providers' own pages.
    "cudo": "neocloud",
    "seeweb": "neocloud",
    "jarvislabs": "neocloud",
    "daytona": "neocloud",
    "vast": "marketplace",
    "shadeform": "marketplace",
    "primeintellect": "marketplace",
    "spheron": "marketplace",
    "lium": "marketplace",
    "hyperbolic": "marketplace",
    "yotta": "marketplace",
    OWNED_PROVIDER: "owned",
}
"""Provider name (as the price sheets spell it, lower case) → class."""


def provider_class(provider: str | None) -> ProviderClass:
    """The class of ``provider`` (``None`` or empty: owned hardware; unlisted: ``marketplace``)."""
    key = (provider or OWNED_PROVIDER).strip().casefold()
    return PROVIDER_CLASS_OF.get(key, UNKNOWN_PROVIDER_CLASS)
