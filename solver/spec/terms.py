"""The workload's ``data`` and ``reliability`` fields: what a job moves and keeps, and its own
interruption figures. The charges derived from them are in :mod:`solver.costs.job_terms`."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

__all__ = ["DataSpec", "ReliabilitySpec"]


class DataSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The data a job moves and keeps (GB = 10⁹ bytes); each field optional."""

    dataset_gb: (
        Annotated[float, Meta(ge=0, le=1e8, description="Dataset size (default: derived from the work).")]
        | None
    ) = None
    checkpoint_gb: (
        Annotated[
            float,
            Meta(gt=0, le=1e7, description="One checkpoint's size (default: derived from the model state)."),
        ]
        | None
    ) = None
    checkpoint_every_hours: (
        Annotated[
            float,
            Meta(
                gt=0,
                le=1e5,
                description="Hours of work between checkpoints (default: the interval minimising expected cost).",
            ),
        ]
        | None
    ) = None
    egress_gb: (
        Annotated[
            float, Meta(ge=0, le=1e8, description="Data sent out of the cloud (default: the job's result).")
        ]
        | None
    ) = None


class ReliabilitySpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The workload's own interruption figures; each replaces the cited default."""

    interruptions_per_gpu_hour: (
        Annotated[
            float,
            Meta(ge=0, le=1, description="Hardware interruptions per GPU-hour (default: by GPU generation)."),
        ]
        | None
    ) = None
    restart_minutes: (
        Annotated[float, Meta(ge=0, le=10_080, description="Minutes from an interruption to running again.")]
        | None
    ) = None
    preemptions_per_hour: (
        Annotated[
            float,
            Meta(
                ge=0, le=100, description="Spot preemptions per instance-hour (default: by provider class)."
            ),
        ]
        | None
    ) = None
