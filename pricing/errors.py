"""Errors of the pricing package.

PricingError
 ├── AliasRuleError       a rule of the alias table cannot be parsed
 ├── UnresolvedGpuName    a GPU name in a sheet maps to no catalog GPU (or to two)
 ├── SheetRowError        one row of a sheet cannot be used (bad number, missing price …)
 └── MeasurementError     a benchmark result file cannot be used; ``field`` names what is wrong or missing
"""

from __future__ import annotations

__all__ = ["AliasRuleError", "MeasurementError", "PricingError", "SheetRowError", "UnresolvedGpuName"]


class PricingError(Exception):
    """Base class of every error raised by ``pricing``."""


class AliasRuleError(PricingError):
    """An alias rule's ``context`` is not in the documented clause language."""


class UnresolvedGpuName(PricingError):
    """A GPU name could not be mapped to exactly one catalog GPU; ``reason`` says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"GPU name {name!r}: {reason}")
        self.name = name
        self.reason = reason


class SheetRowError(PricingError):
    """A sheet row that cannot be used; ``column`` names the offending column when there is one."""

    def __init__(self, column: str | None, reason: str) -> None:
        super().__init__(f"{column}: {reason}" if column else reason)
        self.column = column
        self.reason = reason


class MeasurementError(PricingError):
    """A benchmark result that cannot be imported; ``field`` is the upload parameter or file part at fault
    (``file`` for the file itself, ``gpu``, ``model`` ... for a fact neither the file nor the upload gives)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
