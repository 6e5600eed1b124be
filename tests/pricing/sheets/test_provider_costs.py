"""Provider-cost sheets: parsing with a reason per bad row, class defaults filling the gaps, the shipped file."""

from __future__ import annotations

import csv
import io
from importlib import resources

import pytest

from pricing.sheets.provider_costs import COST_FIELDS, PROVIDER_CLASSES, ProviderCosts, parse_provider_costs
from service.db.seed_files import read_gpu_specs
from solver.catalog.providers import PROVIDER_CLASS_OF
from solver.costs.reliability import MARKETPLACE_RATE_MULTIPLE, interruption_rate

HEADER = "provider,provider_class," + ",".join(COST_FIELDS) + ",source,notes"


def _parse(text: str) -> tuple[ProviderCosts, list[str]]:
    rows = enumerate(csv.DictReader(io.StringIO(text)), start=2)
    parsed = parse_provider_costs(rows, "costs.csv")
    return ProviderCosts(parsed.costs), [f"{p.line}:{p.column}:{p.reason}" for p in parsed.problems]


SHEET = f"""{HEADER}
*,hyperscaler,0.08,0.09,0,5,5,8,0.1,docs,
*,neocloud,0.07,0,0,5,5,8,0.1,docs,
*,owned,0,0,0,0,10,8,0,docs,
bigcloud,hyperscaler,0.1,,,,,,,pricing page,
"""


WITH_MARKETPLACE = SHEET + "*,marketplace,0.07,0,0,2,1,8,0.1,docs,\n"


def test_a_provider_fills_its_gaps_from_its_class_and_says_which_figure_is_whose() -> None:
    costs, problems = _parse(SHEET)
    assert problems == []
    big = costs.resolve("bigcloud")
    assert big is not None and big.provider_class == "hyperscaler"
    assert big.values["storage_usd_per_gb_month"] == 0.1 and big.values["egress_usd_per_gb"] == 0.09
    assert big.sources["storage_usd_per_gb_month"] == "bigcloud's published figure"
    assert big.sources["egress_usd_per_gb"] == "hyperscaler default"
    assert "pricing page" in big.citation and "docs" in big.citation
    h100 = next(g for g in read_gpu_specs() if g.gpu_id == "h100-sxm")
    terms = big.supply_terms(h100, spot=False)
    assert terms.preemptions_per_hour == 0 and big.supply_terms(h100, spot=True).preemptions_per_hour == 0.1
    assert terms.startup_hours == pytest.approx(5 / 60)


def test_an_unlisted_provider_takes_the_shared_tables_class_and_owned_gpus_take_the_owned_row() -> None:
    costs, _ = _parse(WITH_MARKETPLACE)
    stranger = costs.resolve("stranger")  # unknown everywhere: a marketplace, the class assuming least
    assert stranger is not None and stranger.provider_class == "marketplace"
    assert "not in the sheet" in stranger.citation
    lam = costs.resolve("lambda")  # not in this sheet, but the shared table knows it
    assert lam is not None and lam.provider_class == "neocloud"
    owned = costs.resolve("owned")
    assert (
        owned is not None
        and owned.values["preemptions_per_hour"] == 0
        and owned.values["startup_minutes"] == 0
    )


def test_the_interruption_rate_follows_the_shared_table_not_the_sheets_class() -> None:
    costs, _ = _parse(WITH_MARKETPLACE + "lium,marketplace,,,,,,,,docs,\nlambda,neocloud,,,,,,,,docs,\n")
    h100 = next(g for g in read_gpu_specs() if g.gpu_id == "h100-sxm")
    lium, lam = costs.resolve("lium"), costs.resolve("lambda")
    assert lium is not None and lam is not None
    cluster = interruption_rate("hopper").per_gpu_hour
    assert lam.supply_terms(h100, spot=False).interruptions_per_gpu_hour == cluster
    marketplace = lium.supply_terms(h100, spot=False).interruptions_per_gpu_hour
    assert marketplace == pytest.approx(MARKETPLACE_RATE_MULTIPLE * cluster)


def test_without_any_sheet_nothing_resolves() -> None:
    assert ProviderCosts([]).resolve("aws") is None


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("*,neocloud,0.07,,0,5,5,8,0.1,docs,", "egress_usd_per_gb:empty"),  # a class default is complete
        ("x,cloudish,0.1,,,,,,,docs,", "provider_class:must be one of"),
        ("x,neocloud,-1,,,,,,,docs,", "storage_usd_per_gb_month:must be a non-negative number"),
        ("x,neocloud,1e300,,,,,,,docs,", "storage_usd_per_gb_month:1e+300 is outside"),
        ("x,neocloud,,,,,0,,,docs,", "download_gbps:must be a positive number"),
        ("x,neocloud,,,,,,,,,", "source:empty"),
        ("bigcloud,neocloud,,,,,,,,docs,", "None:duplicate provider as line 5"),
    ],
)
def test_each_bad_row_names_its_column(row: str, problem: str) -> None:
    _, problems = _parse(SHEET + row + "\n")
    assert len(problems) == 1 and problems[0].startswith(f"6:{problem}"), problems


def test_the_shipped_sheet_parses_with_every_class_default_and_every_shipped_provider() -> None:
    data = resources.files("service").joinpath("data")
    text = data.joinpath("provider_costs.csv").read_text(encoding="utf-8")
    costs, problems = _parse(text)
    assert problems == []
    for kind in PROVIDER_CLASSES:
        assert any(r.provider == "*" and r.provider_class == kind for r in costs.rows)
    prices = csv.DictReader(io.StringIO(data.joinpath("cloud_gpu_prices.csv").read_text(encoding="utf-8")))
    shipped = {row["provider"] for row in prices}
    listed = {r.provider for r in costs.rows}
    assert shipped <= listed, shipped - listed
    assert all(r.source for r in costs.rows)


def test_the_shipped_sheet_classes_its_providers_as_the_shared_table_does() -> None:
    """One class per provider: the sheet's (cost defaults) and the table's (network, interruptions)."""
    text = resources.files("service").joinpath("data", "provider_costs.csv").read_text(encoding="utf-8")
    costs, _ = _parse(text)
    listed = {r.provider: r.provider_class for r in costs.rows if r.provider != "*"}
    assert listed == {p: c for p, c in PROVIDER_CLASS_OF.items() if p in listed}
    assert set(listed) <= set(PROVIDER_CLASS_OF)
