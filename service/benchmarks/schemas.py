"""The answer of POST /v1/plans/{plan_id}/benchmarks: what to benchmark next, each with its recipe,
and what changed since the plan was made."""

from __future__ import annotations

from typing import Literal

import msgspec

from solver import Layout

__all__ = [
    "BenchmarkCandidate",
    "BenchmarkPlanOut",
    "BenchmarkRecipe",
    "ChoiceSummary",
    "CostBand",
    "RecommendationChange",
]


class CostBand(msgspec.Struct, kw_only=True):
    """A configuration's cost over the plan's work (a job) or hours (a fleet): expected and likely range."""

    expected_usd: float
    low_usd: float
    high_usd: float


class BenchmarkRecipe(msgspec.Struct, kw_only=True):
    """How to measure one configuration: where, how long, what it costs, and the commands."""

    provider: str | None
    instance_type: str | None
    region: str | None
    pricing: str
    instances: int
    gpus: int
    setup_minutes: float
    """Instance start and downloads, by the seller's terms (billed like the rest)."""
    warmup_minutes: float
    measure_minutes: float
    cost_usd: float
    """The complete charge of the run (setup, warm-up and measurement, billing increments, transfer)."""
    breakdown: dict[str, float]
    commands: list[str]
    """Shell lines, in order: the server then one ``vllm bench serve`` per request size (serving), or
    the ``torchrun`` line that reads ``config_file`` (training)."""
    config_file: str | None = None
    config: str | None = None
    """The torchtitan job config (TOML) for ``config_file``."""
    rule: str
    """How the minutes were chosen."""


class BenchmarkCandidate(msgspec.Struct, kw_only=True):
    """A configuration that could beat the chosen one once measured, ranked by ``net_value_usd``."""

    rank: int
    gpu: str
    gpu_name: str
    gpu_count: int
    """GPUs of the configuration (training: the job's; serving: one instance of the replica type)."""
    tp: int
    precision: str | None
    layout: Layout | None
    provenance: Literal["measured", "derived"]
    confidence: str
    cost: CostBand
    expected_saving_usd: float
    """What measuring it is expected to save: the mean of (chosen's expected cost − its cost) where
    that is positive, over its cost band (a triangular distribution on low, expected, high)."""
    benchmark_cost_usd: float
    net_value_usd: float
    """``expected_saving_usd − benchmark_cost_usd``: worth measuring when positive."""
    worth_it: bool
    recipe: BenchmarkRecipe


class ChoiceSummary(msgspec.Struct, kw_only=True):
    """A recommendation in one line and its cost."""

    summary: str
    cost_usd: float
    provenance: list[str]
    """Where its throughput or capacity comes from (``measured``/``derived`` and the route)."""


class RecommendationChange(msgspec.Struct, kw_only=True):
    """The stored plan against the same request planned again on the current catalog."""

    changed: bool
    stored: ChoiceSummary
    now: ChoiceSummary
    cost_change_usd: float
    differences: list[str]
    price_sheets_then: list[int]
    price_sheets_now: list[int]


class BenchmarkPlanOut(msgspec.Struct, kw_only=True):
    """What to benchmark next for a stored plan."""

    plan_id: str
    plan_type: Literal["job", "serving"]
    model: str
    chosen: ChoiceSummary
    chosen_cost: CostBand
    candidates: list[BenchmarkCandidate]
    """Configurations whose cost band overlaps the chosen one's, best ``net_value_usd`` first."""
    changes: RecommendationChange
    assumptions: dict[str, str]
