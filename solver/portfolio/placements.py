"""Where a job can run: each option at each start bucket its window allows, with the buckets it holds
and the share of its cost that falls in each; and, for a job that may split, the room each bucket of
its window leaves a stage (the conventions of :mod:`solver.portfolio.model`)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import msgspec

from solver.portfolio.model import JobOption, PortfolioJob, PortfolioProblem, Stage

__all__ = ["Placement", "Room", "end_limit", "placements", "rooms", "staged", "stages", "start_hour"]

_EPS = 1e-9
_SHARE = 1e-6
"""The least share of a split job's work that makes a stage (below: solver noise, left out of the answer)."""


class Placement(msgspec.Struct, frozen=True, kw_only=True):
    """``option`` started in ``bucket`` at ``start`` (hours), ending at ``end``; ``shares[t]`` is the part
    of its work (and of its cost and busy hours) in bucket ``first + t``.

    A split run (``buckets`` given) holds those buckets instead, ``shares`` matching them, each stage
    starting at ``starts`` and spending ``restart_hours`` more on restarting."""

    job: int
    option: int
    bucket: int
    start: float
    end: float
    first: int
    shares: list[float]
    buckets: list[int] = []
    starts: list[float] = []
    restart_hours: float = 0.0

    @property
    def held(self) -> list[int] | range:
        """The buckets the run touches (and holds whole)."""
        return self.buckets or range(self.first, self.first + len(self.shares))

    def busy_hours(self, option: JobOption) -> list[float]:
        """The GPUs' busy hours in each held bucket."""
        return [option.hours * share + self.restart_hours for share in self.shares]

    def usd(self, option: JobOption) -> list[float]:
        """The cost falling in each held bucket (a restart at the option's hourly rate)."""
        rate = option.cost_usd / option.hours if option.hours > 0 else 0.0
        return [option.cost_usd * share + rate * self.restart_hours for share in self.shares]

    def cost(self, option: JobOption) -> float:
        return sum(self.usd(option))


class Room(msgspec.Struct, frozen=True, kw_only=True):
    """A bucket of a split job's window: a stage there starts at ``start`` and has ``hours`` for its work
    (the window's hours in the bucket, less the restart)."""

    bucket: int
    start: float
    hours: float


def end_limit(job: PortfolioJob, problem: PortfolioProblem) -> float:
    """The hour the job must end by: its deadline, and the horizon's end."""
    horizon = problem.horizon_hours
    return horizon if job.deadline_hour is None else min(job.deadline_hour, horizon)


def start_hour(job: PortfolioJob, bucket: int, bucket_hours: float) -> float:
    """A job started in ``bucket`` starts at the bucket's start, or at its earliest start within it."""
    return max(bucket * bucket_hours, job.earliest_start_hour)


def _shares(start: float, end: float, bucket_hours: float) -> tuple[int, list[float]]:
    first = int(start // bucket_hours)
    last = max(first, math.ceil(end / bucket_hours - _EPS) - 1)
    span = end - start
    shares = []
    for t in range(first, last + 1):
        overlap = min(end, (t + 1) * bucket_hours) - max(start, t * bucket_hours)
        shares.append(max(0.0, overlap) / span if span > 0 else 1.0 / (last - first + 1))
    return first, shares


def _fits(option: JobOption, start: float, limit: float) -> bool:
    return start + option.span_hours <= limit + _EPS


def placements(problem: PortfolioProblem, j: int) -> Iterator[Placement]:
    """Every (option, start bucket) of job ``j`` that starts no earlier than it may and ends in time."""
    job = problem.jobs[j]
    limit = end_limit(job, problem)
    first_bucket = int(job.earliest_start_hour // problem.bucket_hours)
    for o, option in enumerate(job.options):
        for s in range(first_bucket, problem.buckets):
            start = start_hour(job, s, problem.bucket_hours)
            if not _fits(option, start, limit):
                break
            first, shares = _shares(start, start + option.span_hours, problem.bucket_hours)
            yield Placement(
                job=j,
                option=o,
                bucket=s,
                start=start,
                end=start + option.span_hours,
                first=first,
                shares=shares,
            )


def rooms(problem: PortfolioProblem, j: int) -> list[Room]:
    """The buckets a stage of job ``j`` may run in (none unless it may split), with their room."""
    job = problem.jobs[j]
    if not job.splittable:
        return []
    limit, b = end_limit(job, problem), problem.bucket_hours
    found = []
    for t in range(int(job.earliest_start_hour // b), problem.buckets):
        start = start_hour(job, t, b)
        room = min(limit, (t + 1) * b) - start - job.restart_hours
        if room > _EPS:
            found.append(Room(bucket=t, start=start, hours=room))
    return found


def staged(problem: PortfolioProblem, j: int, o: int, work: dict[int, float]) -> Placement:
    """The split run of job ``j`` on option ``o`` doing ``work[t]`` of its work in bucket ``t``."""
    job = problem.jobs[j]
    span = job.options[o].span_hours
    at = {room.bucket: room.start for room in rooms(problem, j)}
    buckets = sorted(t for t, w in work.items() if w > _SHARE)
    total = sum(work[t] for t in buckets)
    shares = [work[t] / total for t in buckets]
    return Placement(
        job=j,
        option=o,
        bucket=buckets[0],
        start=at[buckets[0]],
        end=at[buckets[-1]] + job.restart_hours + shares[-1] * span,
        first=buckets[0],
        shares=shares,
        buckets=buckets,
        starts=[at[t] for t in buckets],
        restart_hours=job.restart_hours,
    )


def stages(problem: PortfolioProblem, place: Placement) -> list[Stage]:
    """The stages of a placed run: one for a run without a break, one per bucket for a split run."""
    option = problem.jobs[place.job].options[place.option]
    if not place.buckets:
        return [
            Stage(bucket=place.bucket, start_hour=place.start, end_hour=place.end, share=1.0,
                  hours=option.hours, cost_usd=option.cost_usd)
        ]  # fmt: skip
    busy, usd = place.busy_hours(option), place.usd(option)
    return [
        Stage(bucket=t, start_hour=start, end_hour=start + place.restart_hours + share * option.span_hours,
              share=share, hours=hours, cost_usd=cost)
        for t, start, share, hours, cost in zip(place.buckets, place.starts, place.shares, busy, usd, strict=True)
    ]  # fmt: skip
