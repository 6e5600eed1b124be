"""The ownership inputs as described once in :class:`~service.buy_vs_rent.schemas.OwnInputs`: each one's
name, unit and CLI option, read back from the field's ``Meta`` (the API schema is the field itself)."""

from __future__ import annotations

from typing import Final

import msgspec

from service.buy_vs_rent.schemas import OwnInputs

__all__ = ["OWN_INPUTS", "UNITS", "OwnInput"]


class OwnInput(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    unit: str
    flag: str
    help: str


def _described() -> tuple[OwnInput, ...]:
    info = msgspec.inspect.type_info(OwnInputs)
    assert isinstance(info, msgspec.inspect.StructType)
    inputs = []
    for field in info.fields:
        options = field.type.types if isinstance(field.type, msgspec.inspect.UnionType) else (field.type,)
        extra = next(t.extra for t in options if isinstance(t, msgspec.inspect.Metadata) and t.extra)
        inputs.append(OwnInput(name=field.name, unit=extra["unit"], flag=extra["flag"], help=extra["help"]))
    return tuple(inputs)


OWN_INPUTS: Final = _described()
"""Every ownership input, in the order of ``OwnInputs`` (and of ``pricing.ownership.tco.OwnershipInputs``)."""

UNITS: Final = {item.name: item.unit for item in OWN_INPUTS}
"""The unit of each input, as ``assumptions`` state it when the request gives the value."""
