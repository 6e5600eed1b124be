"""Which fleet a serving plan recommends: a mix of replica types only when it is worth running.

A mix is more to run than one type (two images to build and test, two pools to watch and scale), so
the cheapest mix is recommended only when it saves more than ``mix_threshold`` (a share of the best
single type's cost, default 3 %); otherwise the best single type is the fleet. The plan says which
rule decided, in words, in ``choice.why``.
"""

from __future__ import annotations

import msgspec

from solver import FleetResult

__all__ = ["FleetChoice", "choose_fleet"]


class FleetChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The recommended fleet and why (the cheapest mix, when passed over, in ``passed_over``)."""

    fleet: FleetResult
    why: str
    passed_over: FleetResult | None = None


def choose_fleet(cheapest: FleetResult, single: FleetResult | None, threshold: float) -> FleetChoice:
    """The fleet to recommend from the cheapest (possibly mixed) fleet and the best single type."""
    if single is None:
        return FleetChoice(
            fleet=cheapest, why="the cheapest fleet: no single replica type serves every request size alone"
        )
    if len(cheapest.instances) <= 1:
        return FleetChoice(fleet=cheapest, why="one replica type is the cheapest fleet")
    saved = single.usd_per_hour - cheapest.usd_per_hour
    fraction = saved / single.usd_per_hour if single.usd_per_hour > 0 else 0.0
    types = len(cheapest.instances)
    if fraction > threshold:
        return FleetChoice(
            fleet=cheapest,
            why=f"a mix of {types} replica types: it saves {fraction:.1%} (${saved:,.2f}/h) over the best "
            f"single type, more than the {threshold:.1%} mix_threshold",
        )
    return FleetChoice(
        fleet=single,
        why=f"the best single type: the cheapest mix ({types} replica types, ${cheapest.usd_per_hour:,.2f}/h) "
        f"saves only {fraction:.1%} (${saved:,.2f}/h), not more than the {threshold:.1%} mix_threshold",
        passed_over=cheapest,
    )
