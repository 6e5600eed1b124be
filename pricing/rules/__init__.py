"""Derivation rules applied while reading sheets: GPU name aliases, interconnect and network by provider, the country of a region.

The face of ``pricing.rules``: every public name of its modules."""

from pricing.rules.aliases import AliasRule, AliasTable, NameContext, normalise_alias
from pricing.rules.countries import CITY_CODES, CLOUD_REGIONS, country_of
from pricing.rules.interconnect import INTERCONNECTS, derive_interconnect, interconnect_named
from pricing.rules.iso_countries import COUNTRY_NAMES, ISO_COUNTRIES
from pricing.rules.network import (
    CONSERVATIVE_ETHERNET_GBPS,
    NETWORK_COLUMNS,
    default_gbps,
    derive_network,
    network_from_sheet,
    owned_network,
)

__all__ = [
    "CITY_CODES",
    "CLOUD_REGIONS",
    "CONSERVATIVE_ETHERNET_GBPS",
    "COUNTRY_NAMES",
    "INTERCONNECTS",
    "ISO_COUNTRIES",
    "NETWORK_COLUMNS",
    "AliasRule",
    "AliasTable",
    "NameContext",
    "country_of",
    "default_gbps",
    "derive_interconnect",
    "derive_network",
    "interconnect_named",
    "network_from_sheet",
    "normalise_alias",
    "owned_network",
]
