"""The country an offer's region is in, derived from the provider and the region string.

Price sheets give a region, never a country, and each kind of seller spells regions its own way.
The rule, in order (the first that applies wins; :func:`country_of` returns its name with the code):

1. **cloud region table**: the hyperscalers and the neoclouds whose region names are not
   country-coded (``me-central-1`` is the UAE, not Montenegro) are looked up in
   :data:`CLOUD_REGIONS`, from each provider's published region list; a region of theirs the table
   does not hold has no known country (never guessed from its prefix);
2. **marketplace triple** ``"place, CC, continent"`` (Vast.ai's ``geolocation``:
   ``St.-Petersburg, RU, EU``) → ``CC``;
3. **bare code**: the region is an ISO 3166-1 code, perhaps numbered (Lium and Prime Intellect ``DE``,
   RunPod ``CA``, JarvisLabs ``IN1``, Spheron ``US-1``);
4. **country word**: a word of the region names a country (:data:`COUNTRY_NAMES`: Shadeform and
   Spheron ``frankfurt-germany-5``, Hyperstack ``NORWAY-1``);
5. **leading code**: the region starts with an ISO code and a place (Cudo ``no-kristiansand-1``,
   Seeweb ``it-fr2``, Yotta ``us-central-2``);
6. **city code**: an IATA metropolitan-area code, perhaps numbered (Spheron ``SYD2``, ``TYO4``,
   ``atl``), from :data:`CITY_CODES`.

Otherwise the country is unknown (Hyperbolic ``default``, Daytona ``earth``): such an offer is kept
unless the request names ``constraints.countries``.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from pricing.rules.iso_countries import COUNTRY_NAMES, ISO_COUNTRIES

__all__ = ["CITY_CODES", "CLOUD_REGIONS", "country_of"]

_AWS: Final = {  # docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html
    **dict.fromkeys(("us-east-1", "us-east-2", "us-west-1", "us-west-2"), "US"),
    "af-south-1": "ZA",
    "ap-east-1": "HK",
    "ap-south-1": "IN",
    "ap-south-2": "IN",
    "ap-southeast-1": "SG",
    "ap-southeast-2": "AU",
    "ap-southeast-3": "ID",
    "ap-southeast-4": "AU",
    "ap-southeast-5": "MY",
    "ap-southeast-7": "TH",
    "ap-northeast-1": "JP",
    "ap-northeast-2": "KR",
    "ap-northeast-3": "JP",
    "ca-central-1": "CA",
    "ca-west-1": "CA",
    "eu-central-1": "DE",
    "eu-central-2": "CH",
    "eu-west-1": "IE",
    "eu-west-2": "GB",
    "eu-west-3": "FR",
    "eu-south-1": "IT",
    "eu-south-2": "ES",
    "eu-north-1": "SE",
    "il-central-1": "IL",
    "me-south-1": "BH",
    "me-central-1": "AE",
    "mx-central-1": "MX",
    "sa-east-1": "BR",
}
_GCP: Final = {  # cloud.google.com/compute/docs/regions-zones (region, location)
    **dict.fromkeys(("us-central1", "us-east1", "us-east4", "us-east5", "us-south1"), "US"),
    **dict.fromkeys(("us-west1", "us-west2", "us-west3", "us-west4"), "US"),
    "northamerica-northeast1": "CA",
    "northamerica-northeast2": "CA",
    "northamerica-south1": "MX",
    "southamerica-east1": "BR",
    "southamerica-west1": "CL",
    "europe-west1": "BE",
    "europe-west2": "GB",
    "europe-west3": "DE",
    "europe-west4": "NL",
    "europe-west6": "CH",
    "europe-west8": "IT",
    "europe-west9": "FR",
    "europe-west10": "DE",
    "europe-west12": "IT",
    "europe-central2": "PL",
    "europe-north1": "FI",
    "europe-north2": "SE",
    "europe-southwest1": "ES",
    "asia-east1": "TW",
    "asia-east2": "HK",
    "asia-northeast1": "JP",
    "asia-northeast2": "JP",
    "asia-northeast3": "KR",
    "asia-south1": "IN",
    "asia-south2": "IN",
    "asia-southeast1": "SG",
    "asia-southeast2": "ID",
    "australia-southeast1": "AU",
    "australia-southeast2": "AU",
    "me-central1": "QA",
    "me-central2": "SA",
    "me-west1": "IL",
    "africa-south1": "ZA",
}
_AZURE: Final = {  # learn.microsoft.com/azure/reliability/regions-list
    **dict.fromkeys(("eastus", "eastus2", "centralus", "northcentralus", "southcentralus"), "US"),
    **dict.fromkeys(("westcentralus", "westus", "westus2", "westus3"), "US"),
    "canadacentral": "CA",
    "canadaeast": "CA",
    "brazilsouth": "BR",
    "northeurope": "IE",
    "westeurope": "NL",
    "uksouth": "GB",
    "ukwest": "GB",
    "francecentral": "FR",
    "germanywestcentral": "DE",
    "swedencentral": "SE",
    "switzerlandnorth": "CH",
    "norwayeast": "NO",
    "polandcentral": "PL",
    "italynorth": "IT",
    "spaincentral": "ES",
    "japaneast": "JP",
    "japanwest": "JP",
    "koreacentral": "KR",
    "australiaeast": "AU",
    "southeastasia": "SG",
    "eastasia": "HK",
    "centralindia": "IN",
    "southindia": "IN",
    "uaenorth": "AE",
    "qatarcentral": "QA",
    "israelcentral": "IL",
    "southafricanorth": "ZA",
    "mexicocentral": "MX",
}
_OCI: Final = {  # docs.oracle.com/iaas/Content/General/Concepts/regions.htm
    **dict.fromkeys(("us-ashburn-1", "us-phoenix-1", "us-chicago-1", "us-sanjose-1"), "US"),
    "af-casablanca-1": "MA",
    "af-johannesburg-1": "ZA",
    "eu-frankfurt-1": "DE",
    "uk-london-1": "GB",
    "ap-tokyo-1": "JP",
    "ap-osaka-1": "JP",
    "ca-toronto-1": "CA",
    "ca-montreal-1": "CA",
}

CLOUD_REGIONS: Final[dict[str, dict[str, str]]] = {
    "aws": _AWS,
    "gcp": _GCP,
    "azure": _AZURE,
    "oci": _OCI,
    # docs.nebius.com/overview/regions: eu-north1 Finland, eu-west1 Paris, us-central1 Kansas City
    "nebius": {"eu-north1": "FI", "eu-west1": "FR", "us-central1": "US"},
    # Lambda Cloud API "regions": us-* in the United States, europe-central-1 Frankfurt (Germany)
    "lambda": {
        **dict.fromkeys(("us-east-1", "us-west-1", "us-west-2", "us-west-3", "us-south-1"), "US"),
        "us-midwest-1": "US",
        "europe-central-1": "DE",
        "asia-south-1": "IN",
        "me-west-1": "IL",
        "asia-northeast-1": "JP",
        "asia-northeast-2": "JP",
    },
    # Verda (formerly DataCrunch) locations: FIN-01..03 Helsinki area, Finland; ICE-01 Iceland
    "verda": {"FIN-01": "FI", "FIN-02": "FI", "FIN-03": "FI", "ICE-01": "IS"},
}
"""Per provider whose region names are not country-coded: region → country."""

CITY_CODES: Final[dict[str, str]] = {"atl": "US", "syd": "AU", "tyo": "JP"}
"""IATA metropolitan-area codes seen in sheets (IATA Airline Coding Directory): Atlanta, Sydney,
Tokyo."""

_CONTINENTS: Final = frozenset(("AF", "AN", "AS", "EU", "NA", "OC", "SA"))
_WORDS: Final = re.compile(r"[a-z]+")


def _marketplace_triple(region: str) -> str | None:
    parts = [p.strip() for p in region.split(",")]
    if len(parts) == 3 and parts[2] in _CONTINENTS and parts[1] in ISO_COUNTRIES:
        return parts[1]
    return None


def _bare_code(region: str) -> str | None:
    found = re.fullmatch(r"([A-Za-z]{2})[- ]?\d*", region)
    code = found.group(1).upper() if found else None
    return code if code in ISO_COUNTRIES else None


def _country_word(words: list[str]) -> str | None:
    return next((COUNTRY_NAMES[w] for w in words if w in COUNTRY_NAMES), None)


def _leading_code(region: str, words: list[str]) -> str | None:
    if len(words) < 2 or len(words[0]) != 2 or not re.match(r"[A-Za-z]{2}-", region):
        return None
    code = words[0].upper()
    return code if code in ISO_COUNTRIES else None


def _city_code(region: str) -> str | None:
    found = re.fullmatch(r"([A-Za-z]{3})\d*", region)
    return CITY_CODES.get(found.group(1).casefold()) if found else None


@functools.lru_cache(maxsize=8192)
def country_of(provider: str, region: str) -> tuple[str | None, str]:
    """(ISO 3166-1 alpha-2 code or None, the rule that gave it) for an offer's region."""
    table = CLOUD_REGIONS.get(provider.casefold())
    region = region.strip()
    if table is not None:
        code = table.get(region)
        return (code, f"{provider} region table") if code else (None, f"not in the {provider} region table")
    words = _WORDS.findall(region.casefold())
    rules: tuple[tuple[str, str | None], ...] = (
        ("marketplace 'place, country, continent'", _marketplace_triple(region)),
        ("region is a country code", _bare_code(region)),
        ("region names the country", _country_word(words)),
        ("region starts with a country code", _leading_code(region, words)),
        ("IATA city code", _city_code(region)),
    )
    for name, code in rules:
        if code is not None:
            return code, name
    return None, "the region names no country"
