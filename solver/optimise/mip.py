"""Solving PuLP models on in-process HiGHS, with the project's own outcome type.

* Every solve has a time limit.
* HiGHS creates a thread scheduler per OS thread on its first run and refuses a different ``threads``
  value later (it then reports "Not Solved"); the value is therefore fixed once for the process:
  ``HIGHS_THREADS``.
* PuLP statuses are wrapped: ``optimal`` (proven, or a gap limit reached with a solution),
  ``time_limited`` (a solution, with the remaining gap), ``infeasible``, ``error``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from importlib.metadata import version
from typing import Any, Final, Literal

import highspy
import msgspec
import pulp

__all__ = ["BACKEND", "HIGHS_THREADS", "SMALL_MILP_OPTIONS", "SolveOutcome", "solve"]

HIGHS_THREADS: Final = 1
"""One HiGHS thread per solve: requests are already solved concurrently in a bounded thread pool."""

SMALL_MILP_OPTIONS: Final = {"mip_allow_restart": False, "mip_heuristic_run_feasibility_jump": False}
"""HiGHS options for this project's small MILPs (a plan's one-hot choice over its Pareto front, a
fleet of tens of types and a few classes): the root node closes the gap, and restarts after presolve
and the feasibility-jump heuristic only add time (fleets: median 80 → 16 ms and 43 → 27 ms on two
derived-capacity fleets; a plan's choice: about a third less; same optima). Both are speed settings:
every answer is still optimal within HiGHS's default gap."""

BACKEND: Final = f"HiGHS {version('highspy')} in-process via PuLP {pulp.__version__}"

OutcomeStatus = Literal["optimal", "time_limited", "infeasible", "error"]


class SolveOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What a solve achieved: ``gap`` is the relative MIP gap (0 when proven optimal)."""

    status: OutcomeStatus
    objective: float | None
    best_bound: float | None
    gap: float | None
    solve_ms: float
    backend: str = BACKEND
    message: str = ""


_SUCCESS = {pulp.LpSolveStatus.Optimal, pulp.LpSolveStatus.GapLimit}


def _first_highs_without_banner() -> None:
    """Make the process's first HiGHS object with file descriptor 1 pointed at /dev/null.

    highspy prints its banner ("Running HiGHS …") from C++ straight to stdout when the first ``Highs``
    of a process is constructed — before any option such as ``output_flag`` can be set — which would
    corrupt ``gpuplan … --json`` output and the server's stdout. Later objects print nothing.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()  # type: ignore[no-untyped-call]  # highspy ships no annotations for it
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_first_highs_without_banner()


def solve(
    problem: pulp.LpProblem,
    *,
    time_limit_s: float = 5.0,
    options: Mapping[str, bool | int | float] | None = None,
) -> SolveOutcome:
    """Solve ``problem`` in place (variable values are set) and say how it went; ``options`` are HiGHS
    options (names as in the HiGHS documentation) for this solve."""
    highs_options: dict[str, Any] = dict(options or {})  # passed through to Highs.setOptionValue
    solver = pulp.HiGHS(msg=False, timeLimit=time_limit_s, threads=HIGHS_THREADS, **highs_options)
    started = time.perf_counter()
    try:
        stats = problem.solve(solver)
    except pulp.PulpError as exc:
        return SolveOutcome(
            status="error",
            objective=None,
            best_bound=None,
            gap=None,
            solve_ms=(time.perf_counter() - started) * 1000,
            message=str(exc),
        )
    elapsed = (time.perf_counter() - started) * 1000
    objective = float(stats.objective) if stats.has_solution and stats.objective is not None else None
    bound = float(stats.best_bound) if stats.best_bound is not None else None
    gap = float(stats.gap_rel) if stats.gap_rel is not None else None
    if stats.status in _SUCCESS and stats.has_solution:
        return SolveOutcome(
            status="optimal", objective=objective, best_bound=bound, gap=gap or 0.0, solve_ms=elapsed
        )
    if stats.status == pulp.LpSolveStatus.TimeLimit and stats.has_solution:
        return SolveOutcome(
            status="time_limited",
            objective=objective,
            best_bound=bound,
            gap=gap,
            solve_ms=elapsed,
            message=f"time limit of {time_limit_s:g} s reached",
        )
    if stats.status == pulp.LpSolveStatus.Infeasible:
        return SolveOutcome(status="infeasible", objective=None, best_bound=None, gap=None, solve_ms=elapsed)
    return SolveOutcome(
        status="error",
        objective=None,
        best_bound=bound,
        gap=None,
        solve_ms=elapsed,
        message=f"solver status {stats.status_str}",
    )
