"""The Pareto chart's axis rule (issue 25: "one outlier squashes the axis"): the axes span the points up
to the 90th percentile, a point far beyond is drawn on the edge and flagged, every point keeps its
number and tooltip. The points are made up for the rule: twenty configurations along a front and one
that costs twenty times more."""

from __future__ import annotations

import re

from service.plans.schemas import ParetoPoint
from service.web.pareto_chart import chart_points, pareto_svg


def _point(hours: float, cost: float, chosen: bool = False) -> ParetoPoint:
    return ParetoPoint(gpu="h100-sxm", gpu_name="H100 SXM", gpu_count=8, acquisition="rent", provider="lambda",
                       instance_type="gpu_8x_h100", region="us-east-1", hours=hours, cost_usd=cost, chosen=chosen)  # fmt: skip


FRONT = [_point(10.0 + 10 * i, 300.0 - 10 * i, chosen=i == 12) for i in range(20)]
OUTLIER = _point(5.0, 6000.0)


def test_an_outlier_is_drawn_on_the_edge_and_does_not_set_the_axis() -> None:
    points = chart_points([*FRONT, OUTLIER])
    assert [p.off_scale for p in points if p.cost_usd == 6000.0] == [True]
    assert not any(p.off_scale for p in points if p.cost_usd < 6000.0)
    svg = str(pareto_svg(points, "front"))
    ticks = [int(t.replace(",", "")) for t in re.findall(r'text-anchor="end">\$([\d,]+)</text>', svg)]
    assert ticks and max(ticks) < 1000, "the cost axis ends near the front, not at the outlier"
    assert "off scale: drawn at the edge" in svg and svg.count("<path ") == 1


def test_without_an_outlier_every_point_is_on_scale_numbered_and_titled() -> None:
    points = chart_points(FRONT)
    assert not any(p.off_scale for p in points)
    assert [p.number for p in points] == list(range(1, 21))
    svg = str(pareto_svg(points, "front"))
    titles = re.findall(r"<title>(#\d+: [^<]+)</title>", svg)
    assert len(titles) == 20 and [t.split(":")[0] for t in titles if t.endswith("(chosen)")] == ["#13"]
    assert "8 × H100 SXM, lambda, gpu_8x_h100, us-east-1" in titles[0]


def test_the_chosen_points_label_stays_inside_the_chart() -> None:
    """The chosen point at the right edge (the slowest, cheapest): its label reads leftwards."""
    front = [_point(10.0 + 10 * i, 300.0 - 10 * i, chosen=i == 19) for i in range(20)]
    svg = str(pareto_svg(chart_points(front), "front"))
    label = re.search(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="(\w+)" font-weight="600">#20 chosen', svg)
    assert label is not None and label.group(2) == "end" and float(label.group(1)) < 720
