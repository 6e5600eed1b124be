"""Which recommendation changed: a stored plan against its request planned again on the current
catalog (new price sheets, uploaded measurements)."""

from __future__ import annotations

from service.benchmarks.schemas import ChoiceSummary, RecommendationChange
from service.plans.schemas import AnyPlan, PlanOut, ReplicaOut, ServingPlanOut

__all__ = ["choice_summary", "recommendation_change"]


def _offer_text(provider: str | None, instance_type: str | None, region: str | None, pricing: str) -> str:
    if provider is None:
        return "owned"
    return f"{provider} {instance_type} ({region}, {pricing.replace('_', '-')})"


def _job_summary(plan: PlanOut) -> ChoiceSummary:
    c, offer = plan.choice, plan.choice.offer
    where = _offer_text(
        offer.provider if offer else None,
        offer.instance_type if offer else None,
        offer.region if offer else None,
        offer.pricing if offer else "owned",
    )
    layout = f", {c.layout.text()}" if c.layout else ""
    t = plan.estimate.throughput
    return ChoiceSummary(
        summary=f"{c.gpu_count} x {c.gpu_name} on {where}{layout}",
        cost_usd=plan.cost.total_usd,
        provenance=[f"{t.provenance} ({t.route})"],
    )


def _replica_text(r: ReplicaOut) -> str:
    offer = r.offer
    where = _offer_text(
        offer.provider if offer else None,
        offer.instance_type if offer else None,
        offer.region if offer else None,
        offer.pricing if offer else "owned",
    )
    return f"{r.replicas} x {r.gpu_name} (tp={r.tp}, {r.precision}) on {where}"


def _fleet_summary(plan: ServingPlanOut) -> ChoiceSummary:
    return ChoiceSummary(
        summary="; ".join(_replica_text(r) for r in plan.choice.replicas),
        cost_usd=plan.cost.total_usd,
        provenance=sorted(
            {
                f"{r.gpu_name} {c.input_tokens}/{c.output_tokens}: {c.capacity_provenance}"
                for r in plan.choice.replicas
                for c in r.classes
                if c.share_of_class > 0
            }
        ),
    )


def choice_summary(plan: AnyPlan) -> ChoiceSummary:
    """The plan's recommendation in one line, its cost and where its numbers come from."""
    return _job_summary(plan) if isinstance(plan, PlanOut) else _fleet_summary(plan)


def recommendation_change(stored: AnyPlan, now: AnyPlan) -> RecommendationChange:
    """What differs between the stored plan and the same request planned now."""
    then_summary, now_summary = choice_summary(stored), choice_summary(now)
    differences = []
    if then_summary.summary != now_summary.summary:
        differences.append(f"choice: {then_summary.summary} -> {now_summary.summary}")
    if abs(then_summary.cost_usd - now_summary.cost_usd) > 0.005:
        differences.append(f"cost: ${then_summary.cost_usd:,.2f} -> ${now_summary.cost_usd:,.2f}")
    if then_summary.provenance != now_summary.provenance:
        differences.append(
            f"numbers from: {', '.join(then_summary.provenance)} -> {', '.join(now_summary.provenance)}"
        )
    return RecommendationChange(
        changed=then_summary.summary != now_summary.summary,
        stored=then_summary,
        now=now_summary,
        cost_change_usd=now_summary.cost_usd - then_summary.cost_usd,
        differences=differences,
        price_sheets_then=[v.version for v in stored.price_sheet.versions],
        price_sheets_now=[v.version for v in now.price_sheet.versions],
    )
