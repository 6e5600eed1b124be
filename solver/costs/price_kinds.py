"""The kinds of price a GPU can be had at, and what a commitment bills.

* ``on_demand``: per instance-hour, billed in the offer's increment, stopped at any time.
* ``spot``: the same at an interruptible price; preemptions are charged (``charges``).
* ``reserved_1y`` / ``reserved_3y``: a committed (reserved) price for one or three years. The
  commitment is billed for its whole term whether the instances are busy or not (AWS EC2 Reserved
  Instances and Savings Plans, Google Cloud committed-use discounts and Azure reservations all bill
  every hour of the term), so a job that runs 300 hours on a 1-year commitment pays 8,760 hours: its
  billing increment is the term, and the complete charge rounds the wall time up to whole terms.
* ``owned``: per busy hour of hardware bought outright (``service.plans.owned`` states the basis).
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["PRICE_KINDS", "RESERVED_TERM_HOURS", "PriceKind", "RentedKind", "ReservedKind"]

PriceKind = Literal["on_demand", "spot", "reserved_1y", "reserved_3y", "owned"]
ReservedKind = Literal["reserved_1y", "reserved_3y"]
RentedKind = Literal["on_demand", "spot", "reserved_1y", "reserved_3y"]
"""The kinds a rental offer is priced at (every kind but owned)."""

PRICE_KINDS: Final[tuple[PriceKind, ...]] = ("on_demand", "spot", "reserved_1y", "reserved_3y", "owned")
"""Every kind, in the order a plan shows them side by side."""

RESERVED_TERM_HOURS: Final[dict[ReservedKind, int]] = {"reserved_1y": 8_760, "reserved_3y": 26_280}
"""Hours billed per term: 365 days × 24 h = 8,760 (a 1-year term) and three of them (3 years)."""
