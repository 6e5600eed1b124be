"""Human labels and formatted values for the buy-vs-rent inputs the sensitivity table varies.

The API names inputs as fields (``rent_usd_per_gpu_hour``, ``pue``); a page shows what a finance
reader calls them and each value in its unit (``$2.75/GPU-hour``, ``1.30``, ``12.0 %``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = ["input_label", "input_value"]


def _usd(value: float) -> str:
    return f"${value:,.2f}" if abs(value) < 1000 else f"${value:,.0f}"


def _percent(value: float) -> str:
    return f"{value * 100:.1f} %"


_LABELS: Final[dict[str, tuple[str, Callable[[float], str]]]] = {
    "purchase_price_usd_per_gpu": ("purchase price per GPU", _usd),
    "server_overhead_factor": ("server cost over the GPUs (factor)", lambda v: f"×{v:.2f}"),
    "useful_life_years": ("useful life", lambda v: f"{v:.1f} years"),
    "residual_fraction": ("resale value at end of life", _percent),
    "power_kw_per_gpu": ("power per GPU", lambda v: f"{v:.2f} kW"),
    "load_fraction": ("power draw when busy", _percent),
    "idle_power_fraction": ("power draw when idle", _percent),
    "pue": ("data-centre PUE", lambda v: f"{v:.2f}"),
    "electricity_usd_per_kwh": ("electricity", lambda v: f"${v:.3f}/kWh"),
    "colocation_usd_per_kw_month": ("colocation", lambda v: f"${v:,.0f}/kW-month"),
    "maintenance_fraction_per_year": ("maintenance per year", _percent),
    "discount_rate": ("discount rate", _percent),
    "utilization": ("utilisation", _percent),
    "rent_usd_per_gpu_hour": ("rent price", lambda v: f"${v:,.2f}/GPU-hour"),
}


def input_label(name: str) -> str:
    """What a reader calls the input ``name`` (its words, for one the table does not know)."""
    return _LABELS[name][0] if name in _LABELS else name.replace("_", " ")


def input_value(name: str, value: float) -> str:
    """``value`` of the input ``name`` in its unit."""
    return _LABELS[name][1](value) if name in _LABELS else f"{value:,.4g}"
