"""Read a solved portfolio model back: the schedule, serving per bucket, owned use and spend per bucket."""

from __future__ import annotations

from collections import defaultdict

from solver.portfolio.milp import Built
from solver.portfolio.model import BucketUse, ServingBucket
from solver.portfolio.placements import Placement, staged

__all__ = ["Solution", "read"]


def _on(v: object) -> float:
    value = getattr(v, "value", lambda: 0.0)()
    return float(value or 0.0)


class Solution:
    """The chosen placement per job, instances per serving cell and units bought, read once."""

    def __init__(self, b: Built) -> None:
        self.built = b
        self.placed: dict[int, Placement] = {}
        for place, v in b.x:
            if _on(v) > 0.5:
                self.placed[place.job] = place
        for (j, o), z in b.z.items():
            if _on(z) > 0.5:
                work = {room.bucket: _on(w) for jj, oo, room, _u, w in b.stages if (jj, oo) == (j, o)}
                self.placed[j] = staged(b.problem, j, o, work)
        self.dropped = sorted(j for j, d in b.drop.items() if _on(d) > 0.5)
        self.instances = {key: round(_on(v)) for key, v in b.r.items()}
        self.bought = {gpu: round(_on(v)) for gpu, v in b.y.items()}
        self.slack = {key: _on(v) for key, v in b.slack.items() if _on(v) > 1e-6}


def _serving(s: Solution) -> list[ServingBucket]:
    p = s.built.problem
    out = []
    for d, demand in enumerate(p.serving):
        for t in range(p.buckets):
            counts = {o.option_id: s.instances[(d, k, t)] for k, o in enumerate(demand.options)}
            out.append(
                ServingBucket(
                    demand=demand.name,
                    bucket=t,
                    requests_per_s=demand.requests_per_s[t],
                    instances={k: n for k, n in counts.items() if n > 0},
                    capacity_rps=sum(o.requests_per_s * counts[o.option_id] for o in demand.options),
                    cost_usd=sum(
                        o.usd_per_instance_hour * p.bucket_hours * counts[o.option_id] for o in demand.options
                    ),
                )
            )
    return out


class _Tally:
    def __init__(self) -> None:
        self.busy: dict[tuple[str, int], int] = defaultdict(int)
        self.busy_hours: dict[tuple[str, int], float] = defaultdict(float)
        self.all_hours: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.rented_gpus: dict[int, int] = defaultdict(int)
        self.rented: dict[int, float] = defaultdict(float)
        self.owned: dict[int, float] = defaultdict(float)


def _tally_jobs(s: Solution, tally: _Tally) -> None:
    p = s.built.problem
    for place in s.placed.values():
        option = p.jobs[place.job].options[place.option]
        for t, hours, usd in zip(place.held, place.busy_hours(option), place.usd(option), strict=True):
            tally.all_hours[t][option.gpu_id] += option.gpu_count * hours
            if option.acquisition == "own":
                tally.busy[(option.gpu_id, t)] += option.gpu_count
                tally.busy_hours[(option.gpu_id, t)] += option.gpu_count * hours
                tally.owned[t] += usd
            else:
                tally.rented_gpus[t] += option.gpu_count
                tally.rented[t] += usd


def _tally_serving(s: Solution, tally: _Tally) -> None:
    p = s.built.problem
    for (d, k, t), n in s.instances.items():
        option = p.serving[d].options[k]
        usd = option.usd_per_instance_hour * p.bucket_hours * n
        tally.all_hours[t][option.gpu_id] += option.gpus_per_instance * n * p.bucket_hours
        if option.acquisition == "own":
            tally.busy[(option.gpu_id, t)] += option.gpus_per_instance * n
            tally.busy_hours[(option.gpu_id, t)] += option.gpus_per_instance * n * p.bucket_hours
            tally.owned[t] += usd
        else:
            tally.rented_gpus[t] += option.gpus_per_instance * n
            tally.rented[t] += usd


def owned_gpus(s: Solution) -> dict[str, int]:
    """GPUs owned per type once the bought units are in."""
    p = s.built.problem
    have = {pool.gpu_id: pool.gpus for pool in p.owned}
    for option in p.buy:
        have[option.gpu_id] = have.get(option.gpu_id, 0) + option.unit_gpus * s.bought.get(option.gpu_id, 0)
    return {gpu: n for gpu, n in have.items() if n > 0}


def _capital(s: Solution) -> float:
    return sum(o.usd_per_unit * s.bought.get(o.gpu_id, 0) for o in s.built.problem.buy)


def buckets(s: Solution) -> list[BucketUse]:
    """Owned use and spend per bucket."""
    p = s.built.problem
    tally = _Tally()
    _tally_jobs(s, tally)
    _tally_serving(s, tally)
    have = owned_gpus(s)
    capital = _capital(s) / p.buckets
    budgets = [*p.budgets, *([None] * p.buckets)]
    return [
        BucketUse(
            bucket=t,
            owned_gpus=have,
            owned_busy_gpus={g: tally.busy[(g, t)] for g in have},
            owned_utilization={g: tally.busy_hours[(g, t)] / (n * p.bucket_hours) for g, n in have.items()},
            gpu_hours={g: h for g, h in sorted(tally.all_hours[t].items()) if h > 0},
            rented_gpus=tally.rented_gpus[t],
            rented_usd=tally.rented[t],
            owned_usd=tally.owned[t],
            capital_usd=capital,
            budget_usd=budgets[t],
        )
        for t in range(p.buckets)
    ]


def read(b: Built) -> tuple[Solution, list[ServingBucket], list[BucketUse]]:
    s = Solution(b)
    return s, _serving(s), buckets(s)
