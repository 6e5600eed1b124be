"""Why an alternative lost: numbers printed until they differ (issue 25: "175.8 h vs 175.8 h")."""

from __future__ import annotations

from solver.optimise.why import distinct_pair


def _hours(value: float, digits: int) -> str:
    return f"{value:,.{digits}f} h"


def test_a_pair_that_rounds_alike_gets_the_digits_that_tell_it_apart() -> None:
    assert distinct_pair(175.83, 175.81, _hours, 1) == ("175.83 h", "175.81 h")
    assert distinct_pair(175.8312, 175.8304, _hours, 1) == ("175.831 h", "175.830 h")


def test_a_pair_that_differs_keeps_the_asked_digits_and_equal_values_stay_equal() -> None:
    assert distinct_pair(63.3, 79.9, _hours, 1) == ("63.3 h", "79.9 h")
    assert distinct_pair(12.0, 12.0, _hours, 1) == ("12.0 h", "12.0 h")
