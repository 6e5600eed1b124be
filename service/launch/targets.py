"""What a stored plan launches, whatever the launcher: per group of identical nodes, the GPUs and where
they come from, the disk, and the shell that sets up and runs the stack with the plan's layout.

A job plan is one group (``instances`` nodes running torchtitan through ``torchrun``); a serving fleet
is one group per replica type (``instances`` nodes, each running one ``vllm serve`` holding the
type's replicas per instance as vLLM data-parallel ranks).
"""

from __future__ import annotations

import math
from typing import Final

import msgspec

from pricing import AliasTable, NameContext, UnresolvedGpuName
from service.db.snapshot import CatalogSnapshot
from service.launch.commands import SERVE_PORT, TrainSetup, train_commands, train_run, vllm_serve_line
from service.launch.errors import CannotLaunch
from service.plans.pipeline import workload_of
from service.plans.schemas import AnyPlan, OfferRef, PlanOut, ReplicaOut, ServingPlanOut
from solver import ModelArch, PlanRequest, resolve_workload

__all__ = ["CONFIG_FILE", "MIN_DISK_GB", "LaunchGroup", "Where", "launch_groups", "train_setup"]

MIN_DISK_GB: Final = 256
"""SkyPilot's default ``disk_size`` (GB); a plan that keeps more data asks for more."""

_ENV_GB: Final = 50
"""Room for the container image, the Python environment and caches beside the plan's data (an
assumption; the weights, dataset and kept checkpoints are the plan's own figures)."""

CONFIG_FILE: Final = "gpuplan_torchtitan.toml"
"""Where the launch writes the torchtitan job config on each node."""


class Where(msgspec.Struct, frozen=True, kw_only=True):
    """The GPUs of one node and who rents them (``provider`` None: owned)."""

    gpu_name: str
    accelerator: str
    """The GPU as the seller's SkyPilot catalog spells it (``H100``, ``A100-80GB``)."""
    gpus_per_node: int
    provider: str | None
    region: str | None
    instance_type: str | None
    spot: bool


class LaunchGroup(msgspec.Struct, frozen=True, kw_only=True):
    """Identical nodes running one command: ``files`` are written before ``setup`` runs."""

    name: str
    where: Where
    nodes: int
    disk_gb: int
    kind: str
    """``train`` (a batch job that ends) or ``serve`` (a server on :data:`SERVE_PORT`)."""
    setup: str
    run: str
    """The command on each node; for several training nodes it reads ``$NODE_RANK`` and ``$HEAD``."""
    files: dict[str, str] = {}
    port: int | None = None


def accelerator_name(snapshot: CatalogSnapshot, gpu_name: str, offer: OfferRef | None) -> str:
    """The seller's own spelling of ``gpu_name``: an alias rule for that provider (and instance type)
    that resolves back to it, else the GPU's name without spaces."""
    if offer is not None:
        table = AliasTable(snapshot.alias_rules)
        context = NameContext(provider=offer.provider, instance_type=offer.instance_type)
        for rule in snapshot.alias_rules:
            if rule.canonical_gpu != gpu_name or f"provider={offer.provider}" not in rule.context:
                continue
            try:
                if table.resolve(rule.alias, context) == gpu_name:
                    return rule.alias
            except UnresolvedGpuName:
                continue
    return gpu_name.replace(" ", "-")


def _where(snapshot: CatalogSnapshot, gpu_name: str, gpus: int, offer: OfferRef | None) -> Where:
    return Where(
        gpu_name=gpu_name,
        accelerator=accelerator_name(snapshot, gpu_name, offer),
        gpus_per_node=gpus,
        provider=None if offer is None else offer.provider,
        region=None if offer is None else offer.region,
        instance_type=None if offer is None else offer.instance_type,
        spot=offer is not None and offer.pricing == "spot",
    )


def _disk(gb: float) -> int:
    return max(MIN_DISK_GB, math.ceil(gb + _ENV_GB))


def train_setup(
    request: PlanRequest, plan: PlanOut, *, steps: int | None = None, log_freq: int = 10
) -> TrainSetup:
    """The torchtitan run of a job plan: its layout for the plan's steps (or ``steps``)."""
    layout = plan.choice.layout
    if layout is None:
        raise CannotLaunch(
            "plan_id",
            f"plan {plan.plan_id} is a {plan.kind} plan: only training plans have a layout to launch",
        )
    resolved = resolve_workload(workload_of(request))
    total = math.ceil(plan.estimate.work / max(layout.global_batch_tokens, 1))
    return TrainSetup(
        arch=resolved.arch,
        layout=layout,
        seq_len=resolved.seq_len,
        steps=max(1, total if steps is None else steps),
        nodes=plan.choice.instances,
        gpus_per_node=plan.choice.gpu_count // max(plan.choice.instances, 1),
        log_freq=log_freq,
        description=f"gpuplan {plan.plan_id}: {resolved.arch.name} {plan.kind}",
        stack=resolved.stack,
        method=resolved.method,
        lora_rank=resolved.lora_rank,
    )


def _train_group(snapshot: CatalogSnapshot, request: PlanRequest, plan: PlanOut) -> LaunchGroup:
    choice, data = plan.choice, plan.estimate.data
    setup = train_setup(request, plan)
    install, files = train_commands(setup, CONFIG_FILE)
    return LaunchGroup(
        name=f"gpuplan-{plan.plan_id.removeprefix('pl-')}",
        where=_where(snapshot, choice.gpu_name, setup.gpus_per_node, choice.offer),
        nodes=setup.nodes,
        disk_gb=_disk(data.download_gb + data.checkpoint_gb * data.checkpoints_kept),
        kind="train",
        setup="\n".join(install),
        run=train_run(setup, CONFIG_FILE, node_rank="$NODE_RANK", head="$HEAD"),
        files=files,
    )


def _serve_group(
    snapshot: CatalogSnapshot, arch: ModelArch, plan: ServingPlanOut, replica: ReplicaOut, index: int
) -> LaunchGroup:
    if replica.mig is not None:
        raise CannotLaunch(
            "replica_type",
            f"replica type {index} runs on MIG slices ({replica.mig.summary}): neither launcher requests a slice",
        )
    per_node = replica.gpus // max(replica.instances, 1)
    data_parallel = max(1, replica.replicas // max(replica.instances, 1))
    serve = vllm_serve_line(arch, replica.tp, replica.precision)
    if data_parallel > 1:
        serve += f" --data-parallel-size {data_parallel}"
    return LaunchGroup(
        name=f"gpuplan-{plan.plan_id.removeprefix('pl-')}-{index}",
        where=_where(snapshot, replica.gpu_name, per_node, replica.offer),
        nodes=replica.instances,
        disk_gb=_disk(arch.params_b * 2),
        kind="serve",
        setup="pip install vllm",
        run=serve,
        port=SERVE_PORT,
    )


def launch_groups(
    snapshot: CatalogSnapshot, request: PlanRequest, plan: AnyPlan, replica_type: int | None = None
) -> list[LaunchGroup]:
    """The groups a plan launches: the job's one, or each replica type's (only ``replica_type``'s when
    given; 422 naming it when the fleet has no such type)."""
    if isinstance(plan, PlanOut):
        return [_train_group(snapshot, request, plan)]
    replicas = plan.choice.replicas
    if replica_type is not None and not 0 <= replica_type < len(replicas):
        raise CannotLaunch(
            "replica_type", f"the fleet has {len(replicas)} replica type(s): 0 to {len(replicas) - 1}"
        )
    arch = resolve_workload(workload_of(request)).arch
    chosen = range(len(replicas)) if replica_type is None else [replica_type]
    return [_serve_group(snapshot, arch, plan, replicas[i], i) for i in chosen]
