from __future__ import annotations

import pytest

from pricing.ownership.defaults import (
    BUILT_IN_DEFAULTS,
    SheetDefault,
    SheetPrice,
    choose_defaults,
    commitment_discount,
    price_scope,
)
from service.db.seed_files import read_seed_catalog

VERSION = 7


@pytest.fixture(scope="module")
def shipped() -> tuple[list[SheetPrice], list[SheetDefault]]:
    catalog = read_seed_catalog()
    prices = [SheetPrice(**_fields(p), sheet_version=VERSION) for p in catalog.ownership_prices.items]
    defaults = [SheetDefault(**_fields(d), sheet_version=VERSION) for d in catalog.ownership_defaults.items]
    return prices, defaults


def _fields(row: object) -> dict[str, object]:
    return {name: getattr(row, name) for name in row.__struct_fields__}  # type: ignore[attr-defined]


def price(
    gpu: str, usd: float, notes: str, *, date: str = "2025-01", confidence: str = "medium", **extra: float
) -> SheetPrice:
    return SheetPrice(
        gpu_id=gpu,
        gpu_name=gpu.upper(),
        vendor="NVIDIA",
        purchase_price_usd=usd,
        price_basis="street",
        price_date=date,
        server_overhead_factor=extra.get("overhead"),
        system_power_w_per_gpu=extra.get("power"),
        gpu_tdp_w=extra.get("tdp"),
        source=f"source of {usd:g}",
        source_url="https://example.org",
        confidence=confidence,
        notes=notes,
        sheet_version=VERSION,
    )


def of(shipped: tuple[list[SheetPrice], list[SheetDefault]], gpu_id: str) -> list[SheetPrice]:
    return [p for p in shipped[0] if p.gpu_id == gpu_id]


def test_scope_tag() -> None:
    assert price_scope("scope=system_per_gpu (inferred). Lambda ...") == "system_per_gpu"
    assert price_scope("scope=gpu_only. Single SXM module.") == "gpu_only"
    assert price_scope("no tag at all") == "unclear"


def test_direct_scopes_beat_boards_then_confidence_then_date() -> None:
    rows = [
        price("g", 100.0, "scope=baseboard_per_gpu.", date="2025-06", confidence="high"),
        price("g", 300.0, "scope=gpu_only.", date="2024-01", confidence="low"),
        price("g", 200.0, "scope=system_per_gpu.", date="2023-05", confidence="medium"),
        price("g", 250.0, "scope=gpu_only.", date="2024-02", confidence="medium"),
    ]
    chosen = choose_defaults(rows, [], gpu_tdp_w=None, user_price=False)
    assert chosen.price_row is not None and chosen.price_row.purchase_price_usd == 250.0
    assert chosen.purchase_price_usd_per_gpu is not None and chosen.purchase_price_usd_per_gpu.value == 250.0
    only_board = choose_defaults(rows[:1], [], gpu_tdp_w=None, user_price=False)
    assert only_board.purchase_price_usd_per_gpu is not None
    assert only_board.purchase_price_usd_per_gpu.value == 100.0


def test_h100_sxm_from_the_shipped_sheet(shipped: tuple[list[SheetPrice], list[SheetDefault]]) -> None:
    chosen = choose_defaults(of(shipped, "h100-sxm"), shipped[1], gpu_tdp_w=700, user_price=False)
    # medium confidence, most recent (2025-03), a whole DGX per GPU: used as is
    assert chosen.purchase_price_usd_per_gpu is not None
    assert chosen.purchase_price_usd_per_gpu.value == 46_875
    assert chosen.purchase_price_usd_per_gpu.sheet_version == VERSION
    assert "viperatech" in chosen.purchase_price_usd_per_gpu.citation.lower()
    assert chosen.server_overhead_factor is not None and chosen.server_overhead_factor.value == 1.0
    assert chosen.power_kw_per_gpu is not None and chosen.power_kw_per_gpu.value == pytest.approx(1.275)


def test_sheet_defaults_named_in_the_issue(shipped: tuple[list[SheetPrice], list[SheetDefault]]) -> None:
    chosen = choose_defaults(of(shipped, "h100-sxm"), shipped[1], gpu_tdp_w=700, user_price=False)
    expected = {
        "useful_life_years": 5.0,
        "load_fraction": 0.75,
        "pue": 1.25,
        "electricity_usd_per_kwh": 0.10,
        "colocation_usd_per_kw_month": 194.95,
        "maintenance_fraction_per_year": 0.06,
    }
    for name, value in expected.items():
        sourced = getattr(chosen, name)
        assert sourced.value == pytest.approx(value), name
        assert sourced.source == "ownership_sheet" and sourced.sheet_version == VERSION, name
        assert sourced.citation, name
    for name in ("idle_power_fraction", "residual_fraction", "discount_rate"):
        sourced = getattr(chosen, name)
        assert sourced.source == "default" and sourced.citation and sourced.sheet_version is None
    assert chosen.discount_rate.value == 0.07 and "A-94" in chosen.discount_rate.citation


def test_idle_fraction_is_the_stated_derivation() -> None:
    idle = BUILT_IN_DEFAULTS["idle_power_fraction"]
    assert idle.value == pytest.approx(452.2 / 3690.1, abs=1e-4)
    assert "p3dn.24xlarge" in idle.citation


def test_card_price_uses_the_stated_or_generic_overhead(
    shipped: tuple[list[SheetPrice], list[SheetDefault]],
) -> None:
    # RTX 4090: the high-confidence launch MSRP (a card, no stated factor) × the generic 1.64
    chosen = choose_defaults(of(shipped, "rtx-4090"), shipped[1], gpu_tdp_w=450, user_price=False)
    assert chosen.purchase_price_usd_per_gpu is not None and chosen.purchase_price_usd_per_gpu.value == 1599
    assert chosen.server_overhead_factor is not None and chosen.server_overhead_factor.value == 1.64
    # no system power for a consumer card: TDP × chip_to_server_power_default 1.8
    assert chosen.power_kw_per_gpu is not None and chosen.power_kw_per_gpu.value == pytest.approx(0.45 * 1.8)
    assert "TDP 450 W" in chosen.power_kw_per_gpu.citation


def test_board_only_prices_add_the_host(shipped: tuple[list[SheetPrice], list[SheetDefault]]) -> None:
    # H200 SXM has only a baseboard (2024-03) and an "HGX, 8 GPU" listing (2025-01): the newer one,
    # halfway between board and full server
    chosen = choose_defaults(of(shipped, "h200-sxm"), shipped[1], gpu_tdp_w=700, user_price=False)
    assert chosen.purchase_price_usd_per_gpu is not None
    assert chosen.purchase_price_usd_per_gpu.value == pytest.approx(39_083.38)
    assert chosen.server_overhead_factor is not None
    assert chosen.server_overhead_factor.value == pytest.approx(1 + 0.5 * (32_010 / 8) / 39_083.38)


def test_user_price_takes_the_gpus_stated_factor(
    shipped: tuple[list[SheetPrice], list[SheetDefault]],
) -> None:
    h100 = choose_defaults(of(shipped, "h100-sxm"), shipped[1], gpu_tdp_w=700, user_price=True)
    assert h100.purchase_price_usd_per_gpu is None and h100.price_row is None
    assert h100.server_overhead_factor is not None and h100.server_overhead_factor.value == 1.4
    l4 = choose_defaults(of(shipped, "l4"), shipped[1], gpu_tdp_w=72, user_price=True)
    assert l4.server_overhead_factor is not None and l4.server_overhead_factor.value == 1.64


def test_gpu_without_a_price(shipped: tuple[list[SheetPrice], list[SheetDefault]]) -> None:
    chosen = choose_defaults(of(shipped, "a10g"), shipped[1], gpu_tdp_w=None, user_price=False)
    assert chosen.purchase_price_usd_per_gpu is None
    assert chosen.power_kw_per_gpu is None  # no row, no TDP: the caller must ask


def test_missing_sheet_parameter_is_none() -> None:
    chosen = choose_defaults([price("g", 10.0, "scope=gpu_only.")], [], gpu_tdp_w=100, user_price=False)
    assert (
        chosen.pue is None
        and chosen.electricity_usd_per_kwh is None
        and chosen.server_overhead_factor is None
    )


def test_most_recent_then_most_confident_default_row() -> None:
    def row(value: float, date: str, confidence: str) -> SheetDefault:
        return SheetDefault(
            parameter="pue_default_other",
            value=value,
            unit="ratio",
            source=f"s{value}",
            date=date,
            confidence=confidence,
            notes="",
            sheet_version=VERSION,
        )

    rows = [row(1.1, "2023", "high"), row(1.3, "2024", "low"), row(1.2, "2024", "high")]
    chosen = choose_defaults([], rows, gpu_tdp_w=None, user_price=False)
    assert chosen.pue is not None and chosen.pue.value == 1.2


def test_commitment_discounts(shipped: tuple[list[SheetPrice], list[SheetDefault]]) -> None:
    aws = commitment_discount(shipped[1], "aws", "1y")
    assert aws is not None and aws.value == 0.41 and "commit_discount_aws_1y" in aws.citation
    lam = commitment_discount(shipped[1], "lambda", "3y")
    assert lam is not None and lam.value == pytest.approx((0.64 + 0.56 + 0.49) / 3)
    assert lam.confidence == "low" and "mean of" in lam.citation
    assert commitment_discount([], "aws", "1y") is None
