"""The buy-vs-rent page's inputs: URL query parameters ↔ a :class:`BuyVsRentRequest`.

Every input lives in the query, so an answer can be shared and reopened. Empty fields are left out
(their defaults apply, each with its source in the answer); a value that does not convert, or that the
request rejects, is reported with the field it belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from service.buy_vs_rent.own_inputs import OWN_INPUTS
from service.buy_vs_rent.schemas import BuyVsRentRequest
from service.web.query_forms import convert_query

__all__ = ["FIELDS", "request_of"]

_TOP: Final = ("gpu", "gpu_count", "utilization", "horizon_months", "portfolio_id")
_RENT: Final = {"rent_usd_per_gpu_hour": "usd_per_gpu_hour", "commitment": "commitment"}
FIELDS: Final = (*_TOP, *_RENT, *(f"own_{item.name}" for item in OWN_INPUTS))
"""Every query parameter the page reads."""


def _field_of(path: str) -> str:
    """A request path (``own.pue``, ``rent.usd_per_gpu_hour``) as the form field's name."""
    if path.startswith("own."):
        return "own_" + path.removeprefix("own.")
    if path.startswith("rent."):
        inner = path.removeprefix("rent.")
        return next((k for k, v in _RENT.items() if v == inner), path)
    return path or "gpu"


def request_of(query: Mapping[str, str]) -> BuyVsRentRequest:
    """The request the query describes (``QueryError`` naming the field when it cannot be one)."""
    body: dict[str, object] = {k: query[k].strip() for k in _TOP if query.get(k, "").strip()}
    rent = {inner: query[k].strip() for k, inner in _RENT.items() if query.get(k, "").strip()}
    own = {
        i.name: query[f"own_{i.name}"].strip() for i in OWN_INPUTS if query.get(f"own_{i.name}", "").strip()
    }
    if rent:
        body["rent"] = rent
    if own:
        body["own"] = own
    return convert_query(body, BuyVsRentRequest, _field_of)
