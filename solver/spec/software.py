"""Software a job needs and which GPUs run it: the plan request's ``software`` block and its checks.

A :class:`SupportTable` (rows of requirement, vendor, architecture, minimum version and source; the
service ships it as ``service/data/software_support.csv``) says on which GPU architectures each
requirement runs. A GPU's architecture is its catalog row's ``architecture``, and its stack follows its vendor (NVIDIA: cuda, AMD: rocm). Precision choices imply requirements too
(:func:`implied_requirements`): a 4-bit NF4 base needs bitsandbytes' kernels, fp8 needs fp8 tensor
cores (and, to train, an fp8 training recipe). :class:`SoftwareIndex` answers per GPU once per
catalog, so a plan checks each GPU type once, never each configuration. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Final, Literal, NamedTuple, get_args

import msgspec
from msgspec import Meta

from solver.catalog.gpus import GpuSpec
from solver.spec.workload import TRAINING_KINDS, ResolvedWorkload

__all__ = [
    "ARCHITECTURE_NAMES",
    "REQUIREMENTS",
    "VENDOR_STACK",
    "GpuSoftware",
    "Need",
    "Requirement",
    "SoftwareIndex",
    "SoftwareSpec",
    "StackChoice",
    "StackName",
    "SupportRow",
    "SupportTable",
    "implied_requirements",
    "needs_of",
]

Requirement = Literal[
    "bitsandbytes",
    "flash_attention_2",
    "flash_attention_3",
    "fp8_training",
    "fp8_inference",
    "vllm",
    "sglang",
    "tensorrt_llm",
]
REQUIREMENTS: Final[tuple[str, ...]] = get_args(Requirement)
StackName = Literal["cuda", "rocm"]
StackChoice = Literal["cuda", "rocm", "any"]
VENDOR_STACK: Final[Mapping[str, StackName]] = {"NVIDIA": "cuda", "AMD": "rocm"}
ARCHITECTURE_NAMES: Final[Mapping[str, str]] = {
    "kepler": "Kepler",
    "maxwell": "Maxwell",
    "pascal": "Pascal",
    "volta": "Volta",
    "turing": "Turing",
    "ampere": "Ampere",
    "ada": "Ada Lovelace",
    "hopper": "Hopper",
    "blackwell": "Blackwell",
    "gcn5": "GCN5 (Vega)",
    "cdna2": "CDNA2",
    "cdna3": "CDNA3",
    "cdna4": "CDNA4",
}
"""Display names of the architectures a catalog row names (``GpuSpec.architecture``)."""
_EXAMPLES: Final = 4
_BITSANDBYTES_OPTIMIZERS: Final = frozenset({"adamw_8bit", "paged_adamw", "paged_adamw_8bit"})


class SoftwareSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The software stack a job must run on and the libraries or kernels it needs."""

    stack: Annotated[
        StackChoice,
        Meta(description="cuda (NVIDIA GPUs only), rocm (AMD GPUs only) or any (default)."),
    ] = "any"
    requires: Annotated[
        list[Requirement],
        Meta(
            max_length=len(REQUIREMENTS),
            description=(
                "Libraries, kernels or engines the job needs; GPUs that cannot run one are rejected"
                " with the reason software (see GET /v1/gpus: software.supports)."
            ),
        ),
    ] = msgspec.field(default_factory=list)


class SupportRow(msgspec.Struct, frozen=True, kw_only=True):
    """One fact of the compatibility table: ``requirement`` runs on ``vendor``'s ``architecture``."""

    requirement: str
    vendor: str
    architecture: str
    min_version: str
    note: str
    source: str


class SupportTable:
    """The compatibility rows by requirement, (vendor, architecture)."""

    def __init__(self, rows: Iterable[SupportRow]) -> None:
        self.rows: tuple[SupportRow, ...] = tuple(rows)
        self._runs_on: dict[str, dict[tuple[str, str], SupportRow]] = {}
        for row in self.rows:
            self._runs_on.setdefault(row.requirement, {})[row.vendor, row.architecture] = row

    def requirements(self) -> list[str]:
        return sorted(self._runs_on)

    def row(self, requirement: str, vendor: str, architecture: str | None) -> SupportRow | None:
        """The row saying ``requirement`` runs on this vendor's architecture, if any."""
        if architecture is None:
            return None
        return self._runs_on.get(requirement, {}).get((vendor, architecture))

    def placements(self, requirement: str) -> list[tuple[str, str]]:
        """The (vendor, architecture) pairs ``requirement`` runs on, in table order."""
        return list(self._runs_on.get(requirement, {}))


class GpuSoftware(msgspec.Struct, frozen=True, kw_only=True):
    """What one GPU runs: its stack (None for a vendor with neither), architecture and requirements."""

    stack: StackName | None
    architecture: str | None
    supports: tuple[str, ...]


class Need(NamedTuple):
    """A requirement of a plan and why: ``""`` when the request names it, else what implies it."""

    requirement: str
    why: str


def implied_requirements(job: ResolvedWorkload) -> list[Need]:
    """What the job's precision, method and optimizer need beyond plain PyTorch."""
    training = job.kind in TRAINING_KINDS
    needs: list[Need] = []
    if job.precision == "nf4":
        needs.append(Need("bitsandbytes", "implied by precision nf4"))
    elif training and job.method == "qlora":
        needs.append(Need("bitsandbytes", "implied by method qlora"))
    if training and job.optimizer in _BITSANDBYTES_OPTIMIZERS:
        needs.append(Need("bitsandbytes", f"implied by optimizer {job.optimizer}"))
    if job.precision == "fp8":
        needs.append(Need("fp8_training" if training else "fp8_inference", "implied by precision fp8"))
    return needs


def needs_of(spec: SoftwareSpec | None, job: ResolvedWorkload) -> tuple[Need, ...]:
    """The request's requirements, then the implied ones it does not name (each requirement once)."""
    stated = [] if spec is None else [Need(r, "") for r in spec.requires]
    found: dict[str, Need] = {}
    for need in [*stated, *implied_requirements(job)]:
        found.setdefault(need.requirement, need)
    return tuple(found.values())


class SoftwareIndex:
    """Each catalog GPU's stack, architecture and supported requirements, and where each requirement
    runs (with example GPUs), worked out once per catalog."""

    def __init__(self, table: SupportTable, gpus: Mapping[str, GpuSpec]) -> None:
        self.table = table
        self.gpus: dict[str, GpuSoftware] = {}
        by_place: dict[tuple[str, str], list[str]] = {}
        for gpu_id, gpu in sorted(gpus.items(), key=lambda item: item[1].name):
            architecture = gpu.architecture
            supports = tuple(
                r for r in table.requirements() if table.row(r, gpu.vendor, architecture) is not None
            )
            self.gpus[gpu_id] = GpuSoftware(
                stack=VENDOR_STACK.get(gpu.vendor), architecture=architecture, supports=supports
            )
            if architecture is not None:
                by_place.setdefault((gpu.vendor, architecture), []).append(gpu.name)
        self._where = {r: _where(table, r, by_place) for r in table.requirements()}

    def missing(self, gpu: GpuSpec, needs: Sequence[Need], stack: StackChoice) -> str | None:
        """Why ``gpu`` cannot run the job's software (every missing piece named), or None."""
        known = self.gpus.get(gpu.gpu_id)
        if known is None:  # not in the catalog this index was built from
            known = GpuSoftware(stack=VENDOR_STACK.get(gpu.vendor), architecture=None, supports=())
        pieces: list[str] = []
        if stack != "any" and known.stack != stack:
            pieces.append(f"needs the {stack} stack; this {gpu.vendor} GPU runs {known.stack or 'neither'}")
        this = _this(gpu.vendor, known.architecture)
        for need in needs:
            if need.requirement in known.supports:
                continue
            why = f" ({need.why})" if need.why else ""
            where = self._where.get(need.requirement, "no GPU in the compatibility table")
            pieces.append(f"needs {need.requirement}{why}, which runs on {where}; {this}")
        return "; ".join(pieces) or None


def _this(vendor: str, architecture: str | None) -> str:
    if architecture is None:
        return "this GPU's architecture is not in the compatibility table"
    return f"this is {vendor} {ARCHITECTURE_NAMES.get(architecture, architecture)}"


def _where(table: SupportTable, requirement: str, by_place: Mapping[tuple[str, str], list[str]]) -> str:
    """``"NVIDIA Hopper (H100 SXM, H200 SXM, …); AMD CDNA3 (…)"``: where a requirement runs."""
    parts = []
    for vendor, architecture in table.placements(requirement):
        names = by_place.get((vendor, architecture), [])
        shown = ", ".join(names[:_EXAMPLES]) + (", …" if len(names) > _EXAMPLES else "")
        label = f"{vendor} {ARCHITECTURE_NAMES.get(architecture, architecture)}"
        parts.append(f"{label} ({shown})" if shown else label)
    return ", ".join(parts) or "no GPU in the compatibility table"
