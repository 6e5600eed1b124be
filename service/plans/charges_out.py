"""The complete charge of a job plan as the API shows it: the breakdown with the rule behind every
part (``cost.assumptions``), the reliability estimate, the data moved, and the best plan of each kind
of price (on-demand, spot, reserved 1 y / 3 y, owned) side by side, each with the basis it is priced
on: a reservation's whole terms and an owned GPU's assumed utilisation are said, never implied."""

from __future__ import annotations

from pricing import OWNED_PROVIDER, ResolvedCost
from service.db.snapshot import CatalogSnapshot
from service.plans.schemas import CostOut, DataOut, PricingOptionOut, ReliabilityOut
from solver import (
    CHARGE_NAMES,
    DEADLINE_CONFIDENCE,
    HOURS_PER_MONTH,
    PRICE_KINDS,
    RESERVED_TERM_HOURS,
    Band,
    Candidate,
    JobTerms,
    JobTermsWithRules,
    PlanResult,
    Supply,
    complete_bands,
    interruption_rate,
    provider_class,
    supply_rates,
)

__all__ = ["cost_out", "data_out", "price_basis", "pricing_options", "reliability_out"]

_METHOD = (
    "expected interruptions = rate × GPUs × (compute + checkpoint hours); each costs the restart plus "
    "half a checkpoint interval of lost work; the interval minimises the expected total (Young 1974, "
    "Daly 2006: √(2·δ·M) refined) unless the workload fixes it; the deadline is checked with the "
    f"{DEADLINE_CONFIDENCE:.0%} quantile of a Poisson number of interruptions"
)


def _rates(c: Candidate, job: JobTerms, architecture: str) -> tuple[float, float, str]:
    """(interruptions per GPU-hour, preemptions per instance-hour, the rate's source) of a candidate
    on a GPU of ``architecture``: the solver's own rule (:func:`solver.supply_rates`), with its source."""
    terms = c.supply.terms
    rate, preemptions = supply_rates(terms, c.units, job)
    if job.interruptions_per_gpu_hour is not None:
        return rate, preemptions, "given in reliability.interruptions_per_gpu_hour"
    row = interruption_rate(architecture, provider_class(c.supply.provider))
    source = f"{row.citation}, for {row.generations[0]} and alike"
    if c.units == 1:
        source += f"; inside one instance, less the network's {terms.network_interruption_share:.0%} share"
    return rate, preemptions, source


def reliability_out(c: Candidate, job: JobTerms, snapshot: CatalogSnapshot) -> ReliabilityOut:
    rate, preemptions, _ = _rates(c, job, _architecture(snapshot, c))
    s = c.charges
    return ReliabilityOut(
        expected_interruptions=s.interruptions,
        expected_preemptions=s.preemptions,
        interruptions_per_gpu_hour=rate,
        preemptions_per_instance_hour=preemptions,
        checkpoint_interval_hours=s.checkpoint_interval_hours,
        checkpoint_hours=s.checkpoint_hours,
        lost_hours=s.lost_hours,
        setup_hours=s.setup_hours,
        method=_METHOD,
    )


def data_out(job: JobTermsWithRules, c: Candidate) -> DataOut:
    """The sizes the job moves and keeps, whether the dataset's was derived and how, and where it is
    staged."""
    terms, rule = job.terms, job.rules["dataset_gb"]
    return DataOut(
        dataset_gb=terms.dataset_gb,
        checkpoint_gb=terms.checkpoint_gb,
        checkpoints_kept=terms.checkpoints_kept,
        download_gb=terms.download_gb,
        egress_gb=terms.egress_gb,
        dataset_derived=rule.startswith("derived"),
        dataset_rule=rule,
        staged_once=c.charges.shared_staging,
        staging_hours=c.charges.staging_hours,
    )


def _architecture(snapshot: CatalogSnapshot, c: Candidate) -> str:
    return snapshot.gpu_spec(c.supply.gpu_id).architecture


def _seller(snapshot: CatalogSnapshot, c: Candidate) -> ResolvedCost | None:
    return snapshot.provider_costs.resolve(c.supply.provider or OWNED_PROVIDER)


def _source(seller: ResolvedCost | None, field: str) -> str:
    return "no provider-costs sheet: 0" if seller is None else seller.sources[field]


def price_basis(supply: Supply) -> str:
    """How a supply's hours are priced and billed, in words (owned: its stated utilisation basis)."""
    if supply.pricing == "owned":
        return supply.price_source
    rate = f"${supply.usd_per_unit_hour:,.2f}/h per instance"
    if supply.pricing == "reserved_1y" or supply.pricing == "reserved_3y":
        term = RESERVED_TERM_HOURS[supply.pricing]
        return (
            f"reserved for {term // 8_760} year(s) at {rate}: a commitment billed for whole {term:,} h terms "
            "per instance whether the instances are busy or not, so the job pays every hour of the term"
        )
    increment = supply.billing_increment_s
    billed = f"billed in {increment} s increments" if increment > 0 else "billed as used"
    if supply.pricing == "spot":
        return f"spot at {rate}, {billed}; interruptible: expected preemptions are charged"
    return f"on demand at {rate}, {billed}"


def _staging(c: Candidate, job: JobTermsWithRules, seller: ResolvedCost | None) -> str:
    """Where the dataset is staged and why (the rule of :func:`solver.complete_charges`), with the
    figures it compared."""
    terms, s, dataset = c.supply.terms, c.charges, job.terms.dataset_gb
    if dataset <= 0:
        return "no dataset to stage"
    rate = f"{terms.download_gbps:g} Gbit/s ({_source(seller, 'download_gbps')})"
    if s.shared_staging:
        return (
            f"dataset ({job.rules['dataset_gb']}) staged once to {c.supply.provider or 'the'} shared storage before the instances start: "
            f"{dataset:,.2f} GB at {rate} = {s.staging_hours:,.2f} h of elapsed time the instances are not "
            f"billed for, one ingress and one stored copy; a copy on each of the {c.units} instance(s) would "
            f"cost ${s.staging_saving_usd:,.2f} more (their wait at ${c.usd_per_hour:,.2f}/h"
            + (f", and {c.units - 1} more copies' ingress and storage)" if c.units > 1 else ")")
        )
    if not terms.shared_storage:
        why = "no storage shared between this seller's instances (marketplace hosts are separate machines)"
    else:
        why = "staging once would not be cheaper"
    return (
        f"dataset ({job.rules['dataset_gb']}) downloaded by each of the {c.units} instance(s) at setup ({dataset:,.2f} GB at {rate}): {why}; "
        "each keeps its own copy (ingress and storage per instance)"
    )


def _data_texts(c: Candidate, job: JobTermsWithRules, seller: ResolvedCost | None) -> dict[str, str]:
    """The rules of the parts that move or keep data: setup downloads, storage and transfer, each
    with the dataset staged once or per instance (:func:`_staging`)."""
    terms, s, j, rules = c.supply.terms, c.charges, job.terms, job.rules
    return {
        "setup_usd": (
            f"{terms.startup_hours * 60:g} min to start ({_source(seller, 'startup_minutes')}) + "
            f"{j.download_gb - (j.dataset_gb if s.shared_staging else 0):,.2f} GB (model: {rules['model_download_gb']}; "
            + (
                "dataset staged once, see data_staging"
                if s.shared_staging
                else f"dataset: {rules['dataset_gb']}"
            )
            + ") "
            f"at {terms.download_gbps:g} Gbit/s ({_source(seller, 'download_gbps')})"
        ),
        "storage_usd": (
            f"({1 if s.shared_staging else c.units} × {j.dataset_gb:,.2f} GB dataset + {j.checkpoints_kept} × {j.checkpoint_gb:,.2f} GB checkpoints) × "
            f"${terms.storage_usd_per_gb_month:g}/GB-month ({_source(seller, 'storage_usd_per_gb_month')}) × "
            f"{s.wall_hours:,.2f} h / {HOURS_PER_MONTH:g} h"
        ),
        "data_transfer_usd": (
            f"{c.units} × {j.download_gb - (j.dataset_gb if s.shared_staging else 0):,.2f} GB"
            + (f" + {j.dataset_gb:,.2f} GB staged once" if s.shared_staging else "")
            + f" in at ${terms.ingress_usd_per_gb:g}/GB "
            f"({_source(seller, 'ingress_usd_per_gb')}) + {j.egress_gb:,.2f} GB out ({rules['egress_gb']}) at "
            f"${terms.egress_usd_per_gb:g}/GB ({_source(seller, 'egress_usd_per_gb')})"
        ),
    }


def _assumptions(
    c: Candidate, job: JobTermsWithRules, seller: ResolvedCost | None, architecture: str
) -> dict[str, str]:
    terms, s, j, rules = c.supply.terms, c.charges, job.terms, job.rules
    rate, preemptions, rate_source = _rates(c, j, architecture)
    interval = (
        "none before the end"
        if s.checkpoint_interval_hours is None
        else f"every {s.checkpoint_interval_hours:,.2f} h of work "
        + ("(given)" if j.checkpoint_every_hours is not None else "(Young/Daly optimum)")
    )
    spot = c.supply.pricing == "spot"
    texts = {
        "compute_usd": f"${c.usd_per_hour:,.2f}/h × {c.compute_hours:,.2f} compute hours (throughput model)"
        + ("" if c.supply.pricing in ("on_demand", "spot") else f"; {price_basis(c.supply)}"),
        "checkpoint_usd": (
            f"checkpoints of {j.checkpoint_gb:,.2f} GB ({rules['checkpoint_gb']}) written at "
            f"{terms.checkpoint_write_gbps:g} Gbit/s per instance ({_source(seller, 'checkpoint_write_gbps')}), "
            f"{interval}"
        ),
        "failures_usd": (
            f"{rate:.3g} interruptions per GPU-hour ({rate_source}) × {c.gpu_count} GPUs → "
            f"{s.interruptions:,.3f} expected; each a {terms.restart_hours * 60 if j.restart_hours is None else j.restart_hours * 60:g}-min "
            "restart plus half an interval of lost work"
        ),
        "preemption_usd": (
            f"{preemptions:g} preemptions per instance-hour ({_source(seller, 'preemptions_per_hour')}) → "
            f"{s.preemptions:,.3f} expected; each a new instance's start, the restart and half an interval"
            if spot
            else f"{c.supply.pricing.replace('_', '-')} capacity is not preempted"
        ),
        "billing_rounding_usd": (
            f"{s.wall_hours - s.staging_hours:,.3f} wall hours"
            + (f" (after {s.staging_hours:,.2f} h of data staging)" if s.staging_hours > 0 else "")
            + f" billed as {s.billable_hours:,.3f} "
            f"({c.supply.billing_increment_s} s increments)"
            if c.supply.billing_increment_s > 0
            else "busy hours are not rounded"
        ),
        **_data_texts(c, job, seller),
    }
    provider = "no provider-costs sheet: compute only" if seller is None else seller.citation
    return {
        "provider_costs": provider,
        **{name: texts[name] for name in CHARGE_NAMES},
        "data_staging": _staging(c, job, seller),
    }


def cost_out(c: Candidate, job: JobTermsWithRules, snapshot: CatalogSnapshot) -> CostOut:
    _, (low, high) = complete_bands(c)
    return CostOut(
        total_usd=c.cost_usd,
        total_usd_band=Band(low=low, high=high),
        usd_per_hour=c.usd_per_hour,
        billable_hours=c.billable_hours,
        billing_increment_s=c.supply.billing_increment_s,
        breakdown=dict(c.charges.breakdown),
        assumptions=_assumptions(c, job, _seller(snapshot, c), _architecture(snapshot, c)),
    )


def pricing_options(result: PlanResult, owned_utilization: float) -> list[PricingOptionOut]:
    """The best of each kind of price, each optimised on its own (the planner keeps every kind's
    optimum), when more than one kind could run the job; owned options name the utilisation their
    price assumes."""
    if len(result.by_pricing) < 2:
        return []
    options = []
    for pricing in PRICE_KINDS:
        c = result.by_pricing.get(pricing)
        if c is None:
            continue
        (hours_low, hours_high), (cost_low, cost_high) = complete_bands(c)
        options.append(
            PricingOptionOut(
                pricing=c.supply.pricing,
                chosen=c is result.choice,
                gpu=c.supply.gpu_id,
                gpu_count=c.gpu_count,
                provider=c.supply.provider,
                instance_type=c.supply.instance_type,
                hours=c.hours,
                hours_band=Band(low=hours_low, high=hours_high),
                total_usd=c.cost_usd,
                total_usd_band=Band(low=cost_low, high=cost_high),
                breakdown=dict(c.charges.breakdown),
                expected_interruptions=c.charges.interruptions,
                expected_preemptions=c.charges.preemptions,
                price_basis=price_basis(c.supply),
                owned_utilization=owned_utilization if pricing == "owned" else None,
            )
        )
    return options
