"""The solver's exceptions.

Hierarchy::

    SolverError                 base of every error the solver raises on purpose
     ├── InvalidWorkload        a workload field is malformed or contradicts another (an HTTP 400)
     │    └── UnknownModel      ``model.name`` is not in the catalog (carries close matches)
     ├── ThroughputUnavailable  no measured row or calibration covers a (model, task, precision, GPU)
     ├── NoFeasiblePlan         no configuration runs the workload within its limits (an HTTP 422)
     └── LayoutDoesNotFit       no parallel layout (the stated one) runs the job on those GPUs (an HTTP 422)

``service/`` maps each class once to an RFC 9457 problem; nothing here knows about HTTP. Add new
classes at the end of this file, each with a one-line "what/when" docstring, and extend the tree.

:class:`Rejection` is why one GPU type (or one of its supplies) cannot run a workload: it is made
where the reason arises (enumeration, fleet sizing, software and host filters) and travels typed to
the problem body and the plan's ``rejected`` list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

__all__ = [
    "InvalidWorkload",
    "LayoutDoesNotFit",
    "NoFeasiblePlan",
    "Rejection",
    "RejectionReason",
    "RejectionsByGpu",
    "SolverError",
    "ThroughputUnavailable",
    "UnknownModel",
]

RejectionReason = Literal[
    "filter",
    "software",
    "host",
    "ecc",
    "interconnect",
    "network",
    "quota",
    "memory",
    "global_batch",
    "throughput",
    "deadline",
    "budget",
    "availability",
    "precision",
    "no_capacity",
    "max_gpus",
]


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """Why a supply (or all of a GPU's supplies) could not be used."""

    gpu_id: str
    reason: RejectionReason
    detail: str
    supply_id: str | None = None
    gpu_count: int = 0
    admit_at: float | None = None
    """For a limit (deadline, budget, quota): the value of ``constraints.deadline_hours``,
    ``budget_usd`` or ``max_gpus`` that would admit the configuration that came closest."""


RejectionsByGpu = Mapping[str, Sequence[Rejection]]
"""Every unusable GPU type's rejections, one per reason, by GPU id."""


class SolverError(Exception):
    """Base of every error the solver raises on purpose."""


class InvalidWorkload(SolverError):
    """A workload field is malformed or contradicts another field.

    ``field`` is the dotted path of the offending field in the request (``"model.name"``,
    ``"seq_len"``); ``message`` is the human explanation, without the field name.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(field={self.field!r}, message={self.message!r})"


class UnknownModel(InvalidWorkload):
    """A model name matches no catalog entry or alias; ``suggestions`` holds close catalog names."""

    def __init__(self, name: str, suggestions: list[str], field: str = "model.name") -> None:
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(field, f"unknown model {name!r}{hint}")
        self.name = name
        self.suggestions = suggestions

    def __repr__(self) -> str:
        return f"UnknownModel(name={self.name!r}, suggestions={self.suggestions!r})"


class ThroughputUnavailable(SolverError):
    """No measured row or calibration supports a throughput for this model, task, precision and GPU."""


class NoFeasiblePlan(SolverError):
    """No configuration can run the workload within its limits; ``rejected`` says why, per GPU type."""

    def __init__(self, message: str, rejected: RejectionsByGpu) -> None:
        super().__init__(message)
        self.rejected = rejected


class LayoutDoesNotFit(SolverError):
    """No parallel layout (or the stated one) fits the GPUs' memory and meets the global batch;
    ``field`` names the request field whose change would admit one."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
