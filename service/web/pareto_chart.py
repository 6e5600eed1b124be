"""A job plan's Pareto front (cost against hours) as inline SVG a person can read.

Every point carries a number and a ``<title>`` tooltip (GPU name, count, seller, instance, region, hours,
cost) that the table beside the chart repeats; the axes span the points up to a high quantile, so one
outlier does not squash the rest — points beyond it are drawn on the edge as triangles and flagged
"off scale"; hours go on a log axis when they span more than tenfold; small translucent markers keep
a hundred points apart; tick labels sit inside a margin sized for them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, NamedTuple

from markupsafe import Markup, escape

from service.plans.schemas import ParetoPoint
from service.web.render import usd

__all__ = ["ChartPoint", "EdgePoint", "chart_points", "pareto_svg"]

_W, _H = 720, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 86, 24, 20, 54
_QUANTILE: Final = 0.9
_OUTLIER: Final = 3.0
"""A point beyond this many times the span up to the quantile is off scale."""


class ChartPoint(NamedTuple):
    """One point as the chart and its table show it."""

    number: int
    label: str
    where: str
    hours: float
    cost_usd: float
    chosen: bool
    off_scale: bool


class EdgePoint(NamedTuple):
    """A configuration drawn beside the front but never chosen (one that fits only below the memory
    headroom): a hollow triangle with its tooltip."""

    hours: float
    cost_usd: float
    tip: str


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[math.floor(q * (len(ordered) - 1))]


def _upper(values: Sequence[float]) -> float:
    """The axis's upper end: the largest value, unless it lies far beyond the quantile."""
    low, high, top = min(values), _quantile(values, _QUANTILE), max(values)
    if len(values) >= 5 and top - low > _OUTLIER * max(high - low, 1e-9):
        return high + 0.1 * (high - low) if high > low else high * 1.1
    return top


def chart_points(points: Sequence[ParetoPoint]) -> list[ChartPoint]:
    """The front's points, numbered by hours, with what is off scale marked."""
    hour_top = _upper([p.hours for p in points]) if points else 0.0
    cost_top = _upper([p.cost_usd for p in points]) if points else 0.0
    ordered = sorted(points, key=lambda p: (p.hours, p.cost_usd))
    return [
        ChartPoint(
            number=i + 1,
            label=f"{p.gpu_count} × {p.gpu_name or p.gpu}",
            where=", ".join(x for x in (p.provider or "owned", p.instance_type, p.region) if x),
            hours=p.hours,
            cost_usd=p.cost_usd,
            chosen=p.chosen,
            off_scale=p.hours > hour_top or p.cost_usd > cost_top,
        )
        for i, p in enumerate(ordered)
    ]


def _ticks(low: float, high: float, log: bool) -> list[float]:
    if log:
        decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        marks = (1, 2, 5) if high / low < 1000 else (1,)
        return [m * 10.0**k for k in decades for m in marks]
    step = 10 ** math.floor(math.log10(max(high - low, 1e-9) / 5))
    step *= next(m for m in (1, 2, 5, 10) if (high - low) / (step * m) <= 6)
    return [step * k for k in range(math.floor(low / step), math.ceil(high / step) + 1)]


class _Axis(NamedTuple):
    low: float
    high: float
    log: bool
    start: float
    length: float

    def at(self, value: float) -> float:
        value = min(max(value, self.low), self.high)
        if self.log:
            share = math.log(value / self.low) / math.log(self.high / self.low)
        else:
            share = (value - self.low) / (self.high - self.low) if self.high > self.low else 0.5
        return self.start + share * self.length


def _axis(values: Sequence[float], start: float, length: float, allow_log: bool) -> _Axis:
    low, high = min(values), _upper(values)
    log = allow_log and low > 0 and high > 10 * low
    if log:
        return _Axis(low / 1.15, high * 1.15, True, start, length)
    pad = (high - low) * 0.06 or max(abs(high) * 0.05, 1.0)
    return _Axis(max(low - pad, 0.0), high + pad, False, start, length)


def _hours_text(value: float) -> str:
    return f"{value:,.0f} h" if value >= 10 else f"{value:,.3g} h"


def _frame(x: _Axis, y: _Axis) -> list[str]:
    parts = [f'<rect x="{_LEFT}" y="{_TOP}" width="{_W - _LEFT - _RIGHT}" height="{_H - _TOP - _BOTTOM}" '
             'fill="#fff" stroke="#9aa5b8"/>']  # fmt: skip
    for t in _ticks(x.low, x.high, x.log):
        if x.low <= t <= x.high:
            px = x.at(t)
            parts.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{_TOP}" y2="{_H - _BOTTOM}" stroke="#eceff4"/>'
                         f'<text x="{px:.1f}" y="{_H - _BOTTOM + 16}" text-anchor="middle">{_hours_text(t)}</text>')  # fmt: skip
    for t in _ticks(y.low, y.high, False):
        if y.low <= t <= y.high:
            py = y.at(t)
            parts.append(f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{py:.1f}" y2="{py:.1f}" stroke="#eceff4"/>'
                         f'<text x="{_LEFT - 6}" y="{py + 4:.1f}" text-anchor="end">{usd(t)}</text>')  # fmt: skip
    log = ", log scale" if x.log else ""
    parts.append(f'<text x="{(_LEFT + _W - _RIGHT) / 2}" y="{_H - 12}" text-anchor="middle">hours to finish{log}</text>'
                 f'<text transform="translate(16 {(_TOP + _H - _BOTTOM) / 2}) rotate(-90)" text-anchor="middle">total cost</text>')  # fmt: skip
    return parts


def _marker(p: ChartPoint, px: float, py: float) -> str:
    tip = escape(f"#{p.number}: {p.label}, {p.where}; {p.hours:,.1f} h, {usd(p.cost_usd, True)}"
                 + (" (chosen)" if p.chosen else "") + (" (off scale: drawn at the edge)" if p.off_scale else ""))  # fmt: skip
    if p.chosen:
        shape = f'<circle cx="{px:.1f}" cy="{py:.1f}" r="7" fill="#d62728" stroke="#fff"/>'
        right = px > _LEFT + 0.7 * (_W - _LEFT - _RIGHT)  # near the right edge: the label goes left
        anchor, dx = ("end", -10) if right else ("start", 10)
        dy = 18 if py < _TOP + 20 else -8
        shape += (f'<text x="{px + dx:.1f}" y="{py + dy:.1f}" text-anchor="{anchor}" font-weight="600">'
                  f"#{p.number} chosen</text>")  # fmt: skip
    elif p.off_scale:
        shape = f'<path d="M{px:.1f} {py - 6:.1f}l5 9h-10z" fill="#5b6475"/>'
    else:
        shape = f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="#1f5fbf" fill-opacity="0.55"/>'
    return f'<g class="point" data-number="{p.number}"><title>{tip}</title>{shape}</g>'


def _edge(p: EdgePoint, px: float, py: float) -> str:
    return (f'<g class="edge"><title>{escape(p.tip)}</title><path d="M{px:.1f} {py + 5:.1f}l5 -9h-10z" '
            'fill="none" stroke="#e08a00" stroke-width="1.5"/></g>')  # fmt: skip


def pareto_svg(points: Sequence[ChartPoint], title: str, edge: Sequence[EdgePoint] = ()) -> Markup:
    """The chart as an inline ``<svg>`` element (empty for no points); ``edge`` points drawn beside."""
    if not points:
        return Markup("")
    hours = [p.hours for p in points] + [p.hours for p in edge]
    costs = [p.cost_usd for p in points] + [p.cost_usd for p in edge]
    x = _axis(hours, _LEFT, _W - _LEFT - _RIGHT, True)
    y = _axis(costs, _H - _BOTTOM, -(_H - _TOP - _BOTTOM), False)
    body = _frame(x, y)
    body += [_edge(p, x.at(p.hours), y.at(p.cost_usd)) for p in edge]
    body += [_marker(p, x.at(p.hours), y.at(p.cost_usd)) for p in sorted(points, key=lambda p: p.chosen)]
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {_W} {_H}" role="img" aria-labelledby="pareto-title" '
        f'font-size="12" font-family="system-ui, sans-serif"><title id="pareto-title">{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )
