"""Where a job can run: each option at each start bucket its window allows, with the buckets it holds
and the share of its cost that falls in each (the conventions of :mod:`solver.portfolio.model`)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import msgspec

from solver.portfolio.model import JobOption, PortfolioJob, PortfolioProblem

__all__ = ["Placement", "end_limit", "placements", "start_hour"]

_EPS = 1e-9


class Placement(msgspec.Struct, frozen=True, kw_only=True):
    """``option`` started in ``bucket`` at ``start`` (hours), ending at ``end``; ``shares[t]`` is the part
    of its cost (and busy hours) in bucket ``first + t``."""

    job: int
    option: int
    bucket: int
    start: float
    end: float
    first: int
    shares: list[float]

    @property
    def held(self) -> range:
        """The buckets the run touches (and holds whole)."""
        return range(self.first, self.first + len(self.shares))


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
