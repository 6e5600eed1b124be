"""Each ownership input is described once (``OwnInputs``); the TCO inputs, the units and the CLI follow it."""

from __future__ import annotations

import argparse

from pricing.ownership import tco
from pricing.ownership.defaults import OwnershipChoice
from service.buy_vs_rent.cli import _request, register
from service.buy_vs_rent.own_inputs import OWN_INPUTS, UNITS
from service.buy_vs_rent.schemas import OwnInputs


def test_the_description_names_every_tco_input_in_order() -> None:
    names = tuple(item.name for item in OWN_INPUTS)
    assert names == OwnInputs.__struct_fields__ == tco.OwnershipInputs.__struct_fields__
    assert set(names) <= set(OwnershipChoice.__struct_fields__)  # every input has a default, or None
    assert set(UNITS) == set(names) and all(UNITS.values())


def test_every_input_has_one_cli_option() -> None:
    flags = [item.flag for item in OWN_INPUTS]
    assert len(set(flags)) == len(flags) and all(f.startswith("--") for f in flags)
    assert all(item.help for item in OWN_INPUTS)


def test_each_cli_option_sets_its_input() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    base = [
        "buy-vs-rent",
        "--gpu",
        "h100-sxm",
        "--horizon-months",
        "12",
        "--utilization",
        "0.5",
        "--gpu-count",
        "1",
    ]
    value = 1.0  # within every input's bounds
    for item in OWN_INPUTS:
        request = _request(parser.parse_args([*base, item.flag, str(value)]))
        given = {name: getattr(request.own, name) for name in OwnInputs.__struct_fields__}
        assert given == {name: (value if name == item.name else None) for name in given}
