"""Why an alternative lost to the chosen configuration, in words a reader can check: what decided it
(cost, time, deadline risk, memory headroom, a limit, or the order of an exact tie) and the two numbers
it was decided on, each pair printed with as many digits as it takes to tell them apart ("175.83 h vs
175.81 h", never "175.8 h vs 175.8 h")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from solver.optimise.candidates import Candidate
from solver.optimise.warnings import deadline_probability

__all__ = ["LostOn", "distinct_pair", "why_it_lost"]

LostOn = Literal["cost", "time", "deadline_risk", "memory_headroom", "limits", "tie"]
"""What made an alternative lose: the objective (cost or time); for an alternative as good on the
objective, its lower chance of meeting the deadline or its thinner memory headroom; a limit it misses
at 90 % confidence; or nothing (an exact tie, broken by the order)."""

_MAX_DIGITS = 6
_RISK_POINTS = 0.005
"""Deadline chances closer than half a percentage point do not decide anything."""


def distinct_pair(a: float, b: float, fmt: Callable[[float, int], str], digits: int) -> tuple[str, str]:
    """``a`` and ``b`` printed by ``fmt(value, digits)`` with ``digits`` or more, until the two texts
    differ (up to six digits; equal values stay equal)."""
    for d in range(digits, _MAX_DIGITS + 1):
        left, right = fmt(a, d), fmt(b, d)
        if left != right:
            return left, right
    return fmt(a, digits), fmt(b, digits)


def _usd(value: float, digits: int) -> str:
    return f"${value:,.{digits}f}"


def _hours(value: float, digits: int) -> str:
    return f"{value:,.{digits}f} h"


def _cost_text(c: Candidate, best: Candidate) -> str:
    mine, theirs = distinct_pair(c.cost_usd, best.cost_usd, _usd, 2)
    share = (c.cost_usd - best.cost_usd) / best.cost_usd if best.cost_usd > 0 else 0.0
    return (
        f"{mine} vs {theirs} ({share:+.2%})" if abs(share) < 0.001 else f"{mine} vs {theirs} ({share:+.1%})"
    )


def _time_text(c: Candidate, best: Candidate) -> str:
    mine, theirs = distinct_pair(c.hours, best.hours, _hours, 1)
    return f"{mine} vs {theirs}"


def _memory_share(c: Candidate) -> float:
    return c.memory.per_gpu_gib / c.capacity_gib if c.capacity_gib > 0 else 0.0


def _tie_breaker(c: Candidate, best: Candidate, deadline_hours: float | None) -> tuple[LostOn, str] | None:
    """What separates two configurations equal on cost and hours: the deadline's chance, then the
    memory left free on each GPU."""
    if deadline_hours is not None:
        mine, theirs = deadline_probability(c, deadline_hours), deadline_probability(best, deadline_hours)
        if mine < theirs - _RISK_POINTS:
            return "deadline_risk", f"a lower chance of finishing by the deadline: {mine:.0%} vs {theirs:.0%}"
    mine_share, theirs_share = _memory_share(c), _memory_share(best)
    if mine_share > theirs_share + 0.005:
        left, right = distinct_pair(mine_share * 100, theirs_share * 100, lambda v, d: f"{v:.{d}f} %", 0)
        return "memory_headroom", f"less memory headroom: peak {left} vs {right} of each GPU's memory"
    return None


def _deadline_note(c: Candidate, best: Candidate, deadline_hours: float | None) -> str:
    """The deadline's chances when they differ, for a reader weighing the risk beside the objective."""
    if deadline_hours is None:
        return ""
    mine, theirs = deadline_probability(c, deadline_hours), deadline_probability(best, deadline_hours)
    if abs(mine - theirs) < _RISK_POINTS:
        return ""
    return f"; finishes by the deadline with {mine:.0%} chance vs {theirs:.0%}"


def why_it_lost(
    c: Candidate, best: Candidate, objective: Literal["cost", "time"], deadline_hours: float | None = None
) -> tuple[LostOn, str]:
    """(what decided it, the sentence) for alternative ``c`` against the chosen ``best``."""
    cost, time = _cost_text(c, best), _time_text(c, best)
    primary, secondary = (c.cost_usd, best.cost_usd) if objective == "cost" else (c.hours, best.hours)
    scale = max(abs(secondary), 1e-9)
    if deadline_hours is not None and c.charges.deadline_hours > deadline_hours:
        confident, _ = distinct_pair(c.charges.deadline_hours, deadline_hours, _hours, 1)
        return (
            "deadline_risk",
            f"misses the deadline at 90 % confidence: {confident} vs {deadline_hours:,g} h",
        )
    if primary < secondary - 1e-9 * scale:
        return "limits", f"outside the request's limits (cost {cost}, time {time})"
    if primary > secondary + 1e-9 * scale:
        note = _deadline_note(c, best, deadline_hours)
        if objective == "cost":
            sooner = f", though it finishes sooner ({time})" if c.hours < best.hours else ""
            return "cost", f"costs more: {cost}{sooner}{note}"
        cheaper = f", though cheaper: {cost}" if c.cost_usd < best.cost_usd else ""
        return "time", f"slower: {time}{cheaper}{note}"
    other = (c.hours, best.hours) if objective == "cost" else (c.cost_usd, best.cost_usd)
    if other[0] > other[1] + 1e-9 * max(abs(other[1]), 1e-9):
        lost_on: LostOn = "time" if objective == "cost" else "cost"
        same = "same cost" if objective == "cost" else "as fast"
        worse = f"slower: {time}" if objective == "cost" else f"costs more: {cost}"
        return lost_on, f"{same}, {worse}"
    tie = _tie_breaker(c, best, deadline_hours)
    if tie is not None:
        return tie[0], f"same cost and time; {tie[1]}"
    return "tie", f"ties on cost ({cost}) and time ({time}); listed after the choice by order"
