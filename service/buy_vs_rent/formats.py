"""Buy-vs-rent answers as a spreadsheet-safe CSV and as an SVG chart of cumulative cost.

CSV: the monthly schedule, one row per month, then the summary and the assumptions (each section after
an empty line, with its own header); numbers written as numbers (money rounded to cents, the
one place it is rounded); any text cell that a spreadsheet could read as a formula (starting with
``=``, ``+``, ``-``, ``@``, tab or carriage return) is prefixed with a single quote.

SVG: matplotlib (object API, no pyplot state) with the Agg backend; output is deterministic — a fixed
``svg.hashsalt`` and no date in the metadata. The CSV carries present values (discount factor, PV per
month and cumulative), depreciation and book value beside the nominal flows.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Final

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "gpuplan"

from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FuncFormatter  # noqa: E402

from service.buy_vs_rent.schemas import BuyVsRentResponse, MonthRow  # noqa: E402
from service.http import READABLE_DIGITS  # noqa: E402

__all__ = [
    "ASSUMPTIONS_HEADER",
    "CSV_COLUMNS",
    "SUMMARY_HEADER",
    "chart_lock",
    "cumulative_cost_svg",
    "monthly_csv",
    "safe_cell",
    "write_csv_rows",
]

CSV_COLUMNS: Final = (
    "month",
    "own_capital_usd",
    "own_opex_usd",
    "own_residual_usd",
    "own_usd",
    "rent_usd",
    "cumulative_own_usd",
    "cumulative_rent_usd",
    "hybrid_usd",
    "cumulative_hybrid_usd",
    "discount_factor",
    "pv_own_usd",
    "pv_rent_usd",
    "cumulative_pv_own_usd",
    "cumulative_pv_rent_usd",
    "depreciation_usd",
    "book_value_usd",
)
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")
_CHART_LOCK = threading.Lock()  # matplotlib's global state (fonts, rcParams) is not thread-safe


def chart_lock() -> threading.Lock:
    """The lock every matplotlib chart of the service is drawn under (matplotlib is not thread-safe)."""
    return _CHART_LOCK


def safe_cell(value: object) -> object:
    """A CSV cell a spreadsheet will not evaluate: text that looks like a formula gets a leading quote.
    A float keeps ``READABLE_DIGITS`` significant digits, as in the JSON answers."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, float):
        return float(f"{value:.{READABLE_DIGITS}g}")
    if isinstance(value, int):
        return value
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv_rows(rows: Iterable[Sequence[object]]) -> str:
    """CSV text (RFC 4180 quoting, ``\\r\\n`` line ends) of ``rows``, every cell made safe."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
    return buffer.getvalue()


def _cents(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _row(month: MonthRow) -> list[object]:
    return [
        month.month,
        _cents(month.own_capital_usd),
        _cents(month.own_opex_usd),
        _cents(month.own_residual_usd),
        _cents(month.own_usd),
        _cents(month.rent_usd),
        _cents(month.cumulative_own_usd),
        _cents(month.cumulative_rent_usd),
        _cents(month.hybrid_usd),
        _cents(month.cumulative_hybrid_usd),
        round(month.discount_factor, 6),
        _cents(month.pv_own_usd),
        _cents(month.pv_rent_usd),
        _cents(month.cumulative_pv_own_usd),
        _cents(month.cumulative_pv_rent_usd),
        _cents(month.depreciation_usd),
        _cents(month.book_value_usd),
    ]


SUMMARY_HEADER: Final = ("summary", "value")
ASSUMPTIONS_HEADER: Final = ("assumption", "value", "unit", "source", "citation")


def _summary(response: BuyVsRentResponse) -> list[list[object]]:
    return [
        ["npv_own_usd", _cents(response.npv_own_usd)],
        ["npv_rent_usd", _cents(response.npv_rent_usd)],
        ["break_even_utilization", response.break_even_utilization],
        ["break_even_month", response.break_even_month],
        ["payback_month", response.payback_month],
        ["discounted_payback_month", response.discounted_payback_month],
        ["irr_annual", response.irr_annual],
        ["recommendation", response.recommendation.choice],
    ]


def monthly_csv(response: BuyVsRentResponse) -> str:
    """The monthly schedule as CSV (hybrid columns empty without a demand profile), then, each after an
    empty line with its own header, the summary (NPVs, break-even, payback, IRR) and the assumptions
    with their sources: one file a spreadsheet opens with everything the answer rests on."""
    return write_csv_rows(
        [
            CSV_COLUMNS,
            *(_row(m) for m in response.monthly),
            [],
            SUMMARY_HEADER,
            *_summary(response),
            [],
            ASSUMPTIONS_HEADER,
            *([a.name, a.value, a.unit, a.source, a.citation] for a in response.assumptions),
        ]
    )


def _dollars(value: float, _position: object = None) -> str:
    """An axis tick in dollars with thousands separators ($1,250,000; -$20,000)."""
    return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"


def _annotate_end(axes: Any, response: BuyVsRentResponse) -> None:
    """Label the last month's drop of the own line: the owned fleet's remaining value, credited."""
    last = response.monthly[-1]
    if last.own_residual_usd >= 0:
        return
    axes.annotate(
        f"remaining value of the owned GPUs credited: {_dollars(-last.own_residual_usd)}",
        xy=(last.month, last.cumulative_own_usd),
        xytext=(0.98, 0.06),
        textcoords="axes fraction",
        ha="right",
        fontsize=8,
        arrowprops={"arrowstyle": "->", "color": "grey", "linewidth": 0.8},
    )


def cumulative_cost_svg(response: BuyVsRentResponse) -> bytes:
    """Cumulative cost over the months, nominal (solid) and discounted to month 0 (dashed): own, rent
    and (with a demand profile) the hybrid; dollar axis, named series, the break-even month and the
    remaining value at the end labelled, the legend below the plot."""
    rows = response.monthly
    months = [m.month for m in rows]
    fleet = f"{response.gpu_count} × {response.gpu_name}"
    rent_name = f"rent {fleet} ({response.commitment.replace('_', '-')}, ${response.rent_usd_per_gpu_hour:,.2f}/GPU-h)"
    with _CHART_LOCK:
        figure = Figure(figsize=(9, 5.5), dpi=100)
        axes = figure.add_subplot()
        own = axes.plot(months, [m.cumulative_own_usd for m in rows], label=f"buy {fleet}")[0]
        rent = axes.plot(months, [m.cumulative_rent_usd for m in rows], label=rent_name)[0]
        axes.plot(months, [m.cumulative_pv_own_usd for m in rows], color=own.get_color(), linestyle="--",
                  label="buy, present value")  # fmt: skip
        axes.plot(months, [m.cumulative_pv_rent_usd for m in rows], color=rent.get_color(), linestyle="--",
                  label="rent, present value")  # fmt: skip
        if response.hybrid is not None:
            hybrid = [m.cumulative_hybrid_usd or 0.0 for m in rows]
            label = f"hybrid: own {response.hybrid.owned_gpus}, rent the rest"
            axes.plot(months, hybrid, label=label, linestyle="-.")
        if response.break_even_month is not None:
            axes.axvline(response.break_even_month, color="grey", linewidth=0.8, linestyle=":",
                         label=f"break-even: month {response.break_even_month}")  # fmt: skip
        _annotate_end(axes, response)
        axes.yaxis.set_major_formatter(FuncFormatter(_dollars))
        axes.set_title(f"{response.gpu_name}: cumulative cost over {response.horizon_months} months")
        axes.set_xlabel("month")
        axes.set_ylabel("cumulative cost (solid: nominal; dashed: present value)")
        axes.grid(True, linewidth=0.3)
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)
        figure.tight_layout()
        out = io.BytesIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()
