"""The country of an offer's region: each rule of ``pricing.rules.countries`` on the shapes the
shipped sheet and the aggregators write, and no guess where the region names no country."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pricing.rules.countries import CLOUD_REGIONS, country_of
from pricing.rules.iso_countries import COUNTRY_NAMES, ISO_COUNTRIES

SHIPPED = Path(__file__).parents[3] / "service" / "data" / "cloud_gpu_prices.csv"


@pytest.mark.parametrize(
    ("provider", "region", "country", "rule"),
    [
        ("aws", "us-east-1", "US", "aws region table"),
        ("aws", "me-central-1", "AE", "aws region table"),
        ("gcp", "europe-west4", "NL", "gcp region table"),
        ("azure", "westeurope", "NL", "azure region table"),
        ("nebius", "eu-north1", "FI", "nebius region table"),
        ("vast", "St.-Petersburg, RU, EU", "RU", "marketplace 'place, country, continent'"),
        ("lium", "DE", "DE", "region is a country code"),
        ("jarvislabs", "IN1", "IN", "region is a country code"),
        ("spheron", "US-1", "US", "region is a country code"),
        ("shadeform", "frankfurt-germany-5", "DE", "region names the country"),
        ("spheron", "london-uk-1", "GB", "region names the country"),
        ("hyperstack", "NORWAY-1", "NO", "region names the country"),
        ("cudo", "no-kristiansand-1", "NO", "region starts with a country code"),
        ("seeweb", "it-fr2", "IT", "region starts with a country code"),
        ("spheron", "SYD2", "AU", "IATA city code"),
    ],
)
def test_each_rule_names_the_country(provider: str, region: str, country: str, rule: str) -> None:
    assert country_of(provider, region) == (country, rule)


@pytest.mark.parametrize(
    ("provider", "region"),
    [("hyperbolic", "default"), ("daytona", "earth"), ("aws", "xx-nowhere-9"), ("vast", "Somewhere, QQ, EU")],
)
def test_a_region_that_names_no_country_is_unknown(provider: str, region: str) -> None:
    assert country_of(provider, region)[0] is None


def test_a_cloud_region_outside_its_table_is_not_read_by_its_prefix() -> None:
    """``me-`` and ``sa-`` are Middle East and South America at AWS, not Montenegro or Saudi Arabia."""
    assert country_of("aws", "me-west-7") == (None, "not in the aws region table")


def test_every_table_entry_is_an_iso_code() -> None:
    codes = {c for table in CLOUD_REGIONS.values() for c in table.values()} | set(COUNTRY_NAMES.values())
    assert codes <= ISO_COUNTRIES
    assert len(ISO_COUNTRIES) == 249


def test_every_shipped_region_but_two_placeholders_has_a_country() -> None:
    with SHIPPED.open(newline="") as f:
        pairs = {(row["provider"], row["region"]) for row in csv.DictReader(f)}
    unknown = {pair for pair in pairs if country_of(*pair)[0] is None}
    assert unknown == {("hyperbolic", "default"), ("daytona", "earth")}
