from __future__ import annotations

import pulp

from solver.optimise.mip import solve


def one_hot(costs: list[float]) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    problem = pulp.LpProblem("pick", pulp.LpMinimize)
    xs = [problem.add_variable(f"x{i}", 0, 1, pulp.LpBinary) for i in range(len(costs))]
    problem += pulp.lpSum(c * x for c, x in zip(costs, xs, strict=True))
    problem += pulp.lpSum(xs) == 1
    return problem, xs


def test_optimal_solution_and_values() -> None:
    problem, xs = one_hot([3.0, 2.0, 5.0])
    outcome = solve(problem)
    assert outcome.status == "optimal" and outcome.objective == 2.0 and outcome.gap == 0.0
    assert [round(x.value() or 0) for x in xs] == [0, 1, 0]
    assert "HiGHS" in outcome.backend


def test_infeasible_is_reported() -> None:
    problem, xs = one_hot([1.0, 2.0])
    problem += xs[0] + xs[1] == 0
    assert solve(problem).status == "infeasible"


def test_repeated_solves_on_one_thread_keep_working() -> None:
    # HiGHS fixes its thread scheduler per OS thread; a stable `threads` value keeps later solves valid.
    for _ in range(3):
        problem, _ = one_hot([4.0, 1.0])
        assert solve(problem, time_limit_s=1).status == "optimal"
