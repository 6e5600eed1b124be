"""The serving request side: request classes, the SLO, and mix validation naming its field."""

from __future__ import annotations

import msgspec
import pytest

from solver.errors import InvalidWorkload
from solver.spec.serving import MAX_REQUEST_CLASSES, RequestClass, ServingSlo, validate_mix


def rc(i: int, o: int, share: float) -> RequestClass:
    return RequestClass(input_tokens=i, output_tokens=o, share=share)


def test_a_mix_whose_shares_sum_to_one_is_valid() -> None:
    validate_mix([rc(30, 80, 0.5), rc(800, 200, 0.3), rc(1500, 1500, 0.2)])
    validate_mix([rc(10, 10, 1 / 3), rc(20, 20, 1 / 3), rc(30, 30, 1 / 3)])  # float sum within 1e-6


@pytest.mark.parametrize("shares", [[0.5, 0.4], [0.7, 0.4], [0.5, 0.5 + 2e-6]])
def test_shares_not_summing_to_one_name_request_mix(shares: list[float]) -> None:
    with pytest.raises(InvalidWorkload) as info:
        validate_mix([rc(10, 10, share) for share in shares])
    assert info.value.field == "request_mix"
    assert "sum to 1" in info.value.message


def test_an_empty_or_oversized_mix_is_rejected() -> None:
    with pytest.raises(InvalidWorkload) as info:
        validate_mix([])
    assert info.value.field == "request_mix"
    many = [rc(10, 10, 1 / (MAX_REQUEST_CLASSES + 1))] * (MAX_REQUEST_CLASSES + 1)
    with pytest.raises(InvalidWorkload, match="at most") as info:
        validate_mix(many)
    assert info.value.field == "request_mix"


@pytest.mark.parametrize(
    ("item", "field"),
    [
        (rc(10, 10, 0.0), "request_mix[1].share"),
        (rc(10, 10, 1.5), "request_mix[1].share"),
        (rc(10, 10, float("nan")), "request_mix[1].share"),
        (rc(0, 10, 0.5), "request_mix[1].input_tokens"),
        (rc(10, -3, 0.5), "request_mix[1].output_tokens"),
    ],
)
def test_a_bad_item_built_in_code_names_its_path(item: RequestClass, field: str) -> None:
    with pytest.raises(InvalidWorkload) as info:
        validate_mix([rc(10, 10, 0.5), item])
    assert info.value.field == field


def test_decoding_enforces_bounds_and_unknown_fields() -> None:
    ok = msgspec.json.decode(b'{"input_tokens": 30, "output_tokens": 80, "share": 1}', type=RequestClass)
    assert ok == rc(30, 80, 1.0)
    for bad in (
        b'{"input_tokens": 0, "output_tokens": 80, "share": 1}',
        b'{"input_tokens": 30, "output_tokens": 80, "share": 0}',
        b'{"input_tokens": 30, "output_tokens": 80, "share": 1, "extra": 1}',
        b'{"output_tokens": 80, "share": 1}',
    ):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(bad, type=RequestClass)


def test_slo_defaults_and_bounds() -> None:
    slo = msgspec.json.decode(b'{"tpot_ms": 120}', type=ServingSlo)
    assert slo == ServingSlo(tpot_ms=120.0) and slo.ttft_ms is None and slo.percentile == 90.0
    for bad in (b'{"ttft_ms": 0}', b'{"tpot_ms": -1}', b'{"percentile": 0}', b'{"percentile": 101}'):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(bad, type=ServingSlo)
