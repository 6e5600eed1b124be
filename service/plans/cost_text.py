"""The complete charge of a job plan as ``gpuplan plan`` prints it: the breakdown that adds up to the
total, the interruptions behind it, and on-demand, spot and owned side by side."""

from __future__ import annotations

from tabulate import tabulate

from service.plans.schemas import PlanOut

__all__ = ["money", "print_costs"]


def money(value: float) -> str:
    """Dollars with cents and thousands separators, as the CLI prints them."""
    return f"${value:,.2f}"


def _label(name: str) -> str:
    return name.removesuffix("_usd").replace("_", " ")


def print_costs(plan: PlanOut) -> None:
    """Print the breakdown (each part and its share of the total), reliability and pricing options."""
    cost, reliability = plan.cost, plan.estimate.reliability
    total = cost.total_usd
    rows = [
        (_label(name), money(value), f"{value / total:.1%}" if total > 0 else "")
        for name, value in cost.breakdown.items()
    ]
    rows.append(("total", money(total), ""))
    print("\ncost breakdown (rules: --json, cost.assumptions)")
    print(tabulate(rows, tablefmt="plain", colalign=("left", "right", "right")))
    interval = reliability.checkpoint_interval_hours
    print(
        f"\nreliability: {reliability.expected_interruptions:,.3f} interruptions and "
        f"{reliability.expected_preemptions:,.3f} preemptions expected, "
        + ("no checkpoint before the end" if interval is None else f"checkpoint every {interval:,.2f} h")
        + f", {reliability.lost_hours:,.2f} h lost, {reliability.setup_hours:,.2f} h setup"
    )
    if plan.pricing_options:
        print("\nby kind of price (best of each)")
        print(
            tabulate(
                [
                    (
                        option.pricing.replace("_", "-") + (" (chosen)" if option.chosen else ""),
                        f"{option.gpu_count} x {option.gpu}",
                        option.provider or "owned",
                        f"{option.hours:,.1f} ({option.hours_band.low:,.1f}-{option.hours_band.high:,.1f})",
                        f"{money(option.total_usd)} ({money(option.total_usd_band.low)}-"
                        f"{money(option.total_usd_band.high)})",
                        f"{option.expected_preemptions:,.2f}",
                    )
                    for option in plan.pricing_options
                ],
                headers=["price", "GPUs", "from", "hours", "total", "preemptions"],
            )
        )
        for option in plan.pricing_options:
            if option.pricing != "on_demand":  # on demand is the plain rate; the others say their terms
                print(f"{option.pricing.replace('_', '-')}: {option.price_basis}")
