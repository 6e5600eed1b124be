"""Serving capacity measured: bucket lookup on the shipped Mélange rows (derived capacities: tests/solver/engine)."""

from __future__ import annotations

import functools

import pytest

from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec
from solver.catalog.profiles import MeasuredProfile, ServingProfile
from solver.throughput.calibration import ProfileIndex
from solver.throughput.capacity import bucket_of, measured_capacity

MELANGE_GPUS = ("l4", "a10g", "a100-80gb-pcie", "h100-sxm")


@functools.cache
def _catalog() -> tuple[list[ServingProfile], list[MeasuredProfile], dict[str, GpuSpec], ProfileIndex]:
    catalog = read_seed_catalog()
    gpus = {gpu.gpu_id: gpu for gpu in catalog.gpus}
    return catalog.serving.items, catalog.profiles.items, gpus, ProfileIndex(catalog.profiles.items, gpus)


def test_the_shipped_rows_form_a_6x6_grid_per_gpu() -> None:
    rows = _catalog()[0]
    assert len(rows) == 144 and {r.gpu_id for r in rows} == set(MELANGE_GPUS)
    for gpu_id in MELANGE_GPUS:
        cells = {(r.input_len_hi_incl, r.output_len_hi_incl) for r in rows if r.gpu_id == gpu_id}
        assert len(cells) == 36


def test_bucket_lookup_finds_the_range_holding_the_lengths() -> None:
    rows = _catalog()[0]
    row = bucket_of(rows, "Llama-2-7b", "l4", 1, 30, 80)
    assert row is not None
    assert (row.input_len_lo_excl, row.input_len_hi_incl) == (25, 100)
    assert (row.output_len_lo_excl, row.output_len_hi_incl) == (25, 100)
    assert bucket_of(rows, "Llama 2 7B", "l4", 1, 30, 80) == row  # names matched through the catalog
    assert bucket_of(rows, "meta-llama/Llama-2-7b-chat-hf", "l4", 1, 30, 80) == row


@pytest.mark.parametrize(
    ("i", "o", "expected"),
    [
        (25, 25, ((0, 25), (0, 25))),  # hi included
        (26, 25, ((25, 100), (0, 25))),  # lo excluded
        (1, 1, ((0, 25), (0, 25))),
        (2000, 2000, ((1000, 2000), (1000, 2000))),
        (1000, 1001, ((500, 1000), (1000, 2000))),
        (2001, 10, None),
        (10, 2001, None),
    ],
)
def test_bucket_edges(i: int, o: int, expected: tuple[tuple[int, int], tuple[int, int]] | None) -> None:
    row = bucket_of(_catalog()[0], "Llama-2-7b", "a10g", 1, i, o)
    if expected is None:
        assert row is None
    else:
        assert row is not None
        got = (
            (row.input_len_lo_excl, row.input_len_hi_incl),
            (row.output_len_lo_excl, row.output_len_hi_incl),
        )
        assert got == expected


def test_no_bucket_for_other_gpus_tp_or_models() -> None:
    rows = _catalog()[0]
    assert bucket_of(rows, "Llama-2-7b", "t4", 1, 30, 80) is None
    assert bucket_of(rows, "Llama-2-7b", "l4", 2, 30, 80) is None
    assert bucket_of(rows, "Llama 3 8B", "l4", 1, 30, 80) is None
    assert bucket_of(rows, "no such model at all", "l4", 1, 30, 80) is None


def test_measured_capacity_cites_its_row() -> None:
    rows = _catalog()[0]
    row = bucket_of(rows, "Llama-2-7b", "h100-sxm", 1, 300, 300)
    found = measured_capacity(rows, "Llama-2-7b", "h100-sxm", 1, 300, 300)
    assert row is not None and found is not None
    assert found.provenance == "measured" and found.sources == [row.serving_id]
    assert found.requests_per_s == row.max_requests_per_s and "not stated" in found.method
    assert measured_capacity(rows, "Llama-2-7b", "t4", 1, 300, 300) is None
