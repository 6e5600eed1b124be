"""The rest of the machine a job needs per GPU: CPU cores, host memory and storage read rate.

Offers state their host per instance (``vcpus``, ``host_memory_gib``, ``storage_read_gbps``), so each
is divided by the instance's GPUs before it is compared with the request's ``host`` block. An offer
that does not state a number the request asks about is kept (the plan warns: ``host_unknown``); one
whose stated number falls short is passed over, and a GPU whose every offer falls short is rejected
with the reason ``host``. Owned servers are configured by the buyer, so they meet any host request.
Pure: no I/O.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

__all__ = ["HostSpec", "host_shortfall", "host_unknown"]


class HostSpec(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """What each GPU needs from its host; each number is optional (left out: no requirement)."""

    cpu_cores_per_gpu: (
        Annotated[
            float, Meta(gt=0, le=1024, description="vCPUs per GPU at least (the offer's vCPUs / its GPUs).")
        ]
        | None
    ) = None
    host_ram_gib_per_gpu: (
        Annotated[
            float,
            Meta(
                gt=0,
                le=65_536,
                description="Host memory per GPU at least, GiB (the offer's memory / its GPUs).",
            ),
        ]
        | None
    ) = None
    storage_read_gbps: (
        Annotated[
            float,
            Meta(
                gt=0,
                le=100_000,
                description=(
                    "Storage read rate per GPU at least, Gbit/s (the offer's storage_read_gbps / its GPUs);"
                    " offers that do not state one are kept, with a warning."
                ),
            ),
        ]
        | None
    ) = None

    def asks(self) -> bool:
        """Whether any number is asked for."""
        return any(
            v is not None for v in (self.cpu_cores_per_gpu, self.host_ram_gib_per_gpu, self.storage_read_gbps)
        )


def _checks(
    spec: HostSpec, vcpus: float | None, host_memory_gib: float | None, storage_read_gbps: float | None
) -> tuple[tuple[str, float | None, float | None, str], ...]:
    """(field, needed per GPU, stated per instance, unit) for each host number."""
    return (
        ("cpu_cores_per_gpu", spec.cpu_cores_per_gpu, vcpus, "vCPUs"),
        ("host_ram_gib_per_gpu", spec.host_ram_gib_per_gpu, host_memory_gib, "GiB of host memory"),
        ("storage_read_gbps", spec.storage_read_gbps, storage_read_gbps, "Gbit/s of storage reads"),
    )


def host_shortfall(
    spec: HostSpec,
    gpus: int,
    vcpus: float | None,
    host_memory_gib: float | None,
    storage_read_gbps: float | None,
) -> str | None:
    """Why an instance of ``gpus`` GPUs with these stated host numbers falls short, or None."""
    for field, needed, stated, unit in _checks(spec, vcpus, host_memory_gib, storage_read_gbps):
        if needed is not None and stated is not None and stated / gpus < needed:
            return f"{stated / gpus:g} {unit} per GPU ({stated:g} for {gpus} GPU(s)), below host.{field} {needed:g}"
    return None


def host_unknown(
    spec: HostSpec, vcpus: float | None, host_memory_gib: float | None, storage_read_gbps: float | None
) -> tuple[str, ...]:
    """The host numbers the request asks about that the offer does not state."""
    return tuple(
        field
        for field, needed, stated, _ in _checks(spec, vcpus, host_memory_gib, storage_read_gbps)
        if needed is not None and stated is None
    )
