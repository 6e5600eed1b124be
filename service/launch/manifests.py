"""A stored plan as a launcher's file: a SkyPilot task YAML, or Kubernetes manifests.

SkyPilot (``sky launch``/``sky serve up``): ``resources`` with ``accelerators`` (``"H100:8"``, the
seller's catalog spelling), ``infra`` (``cloud/region``, for the clouds SkyPilot knows), ``use_spot``
and ``disk_size``; ``num_nodes``; ``setup`` and ``run`` with the stack's command. A serving replica type
is a SkyServe service (``service.replicas``, ``readiness_probe``) on ``resources.ports``.

Kubernetes: a training plan on one node is a ``batch/v1`` Job; on several nodes a JobSet
(``jobset.x-k8s.io/v1alpha2``) of one Indexed Job whose pods reach the first one through the JobSet's
headless service; a torchtitan config is a ConfigMap mounted in the pods. A serving fleet is a Deployment and a Service
per replica type. Every pod asks for its node's GPUs as ``nvidia.com/gpu``.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import yaml

from service.launch.targets import LaunchGroup

__all__ = ["FORMATS", "SKYPILOT_CLOUDS", "LaunchFormat", "kubernetes_manifests", "skypilot_task"]

LaunchFormat = Literal["skypilot", "kubernetes"]
FORMATS: Final[tuple[LaunchFormat, ...]] = ("skypilot", "kubernetes")

SKYPILOT_CLOUDS: Final = frozenset(
    {"aws", "azure", "cudo", "do", "fluidstack", "gcp", "hyperbolic", "ibm", "lambda", "mithril", "nebius",
     "oci", "paperspace", "primeintellect", "runpod", "scp", "seeweb", "shadeform", "vast", "verda", "yotta"}
)  # fmt: skip
"""The clouds SkyPilot's ``infra`` accepts (``sky.skylet.constants.ALL_CLOUDS`` of SkyPilot 0.14, less
its non-cloud entries); an offer from another seller gets no ``infra``."""

TRAIN_IMAGE: Final = "pytorch/pytorch:latest"
SERVE_IMAGE: Final = "vllm/vllm-openai:latest"
_FILE_END: Final = "GPUPLAN_EOF"


class _Dumper(yaml.SafeDumper):
    """Plain YAML a person reads: multi-line strings as ``|`` blocks, no anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _string(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _string)


def _dump(docs: list[dict[str, Any]]) -> str:
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, width=1000, allow_unicode=True)


def _write_files(group: LaunchGroup) -> list[str]:
    lines: list[str] = []
    for name, text in group.files.items():
        lines += [f"cat > {name} <<'{_FILE_END}'", text.rstrip("\n"), _FILE_END]
    return lines


def _header(group: LaunchGroup, plan_id: str) -> str:
    where = group.where
    seller = (
        f"{where.provider} {where.instance_type} in {where.region}"
        if where.provider
        else "owned GPUs: set infra to your own cluster (k8s or ssh/<node pool>)"
    )
    nodes = f"{group.nodes} node" + ("s" if group.nodes != 1 else "")
    lines = [f"# gpuplan plan {plan_id}: {nodes} of {where.gpus_per_node} {where.gpu_name}, {seller}"]
    if where.provider and where.provider not in SKYPILOT_CLOUDS:
        lines.append(f"# {where.provider} is not a SkyPilot cloud: no infra is set")
    return "\n".join(lines) + "\n"


def _sky_resources(group: LaunchGroup) -> dict[str, Any]:
    where = group.where
    resources: dict[str, Any] = {"accelerators": f"{where.accelerator}:{where.gpus_per_node}"}
    if where.provider in SKYPILOT_CLOUDS:
        resources["infra"] = f"{where.provider}/{where.region}" if where.region else where.provider
    resources["use_spot"] = where.spot
    resources["disk_size"] = group.disk_gb
    if group.port is not None:
        resources["ports"] = group.port
    return resources


def skypilot_task(group: LaunchGroup, plan_id: str) -> str:
    """One SkyPilot task (a SkyServe service for a serving group)."""
    task: dict[str, Any] = {"name": group.name, "resources": _sky_resources(group)}
    if group.kind == "serve":
        task["service"] = {"readiness_probe": "/health", "replicas": group.nodes}
    else:
        task["num_nodes"] = group.nodes
    task["setup"] = "\n".join([group.setup, *_write_files(group)]) + "\n"
    run = [group.run]
    if group.kind == "train" and group.nodes > 1:
        run = [
            "export NODE_RANK=$SKYPILOT_NODE_RANK",
            'export HEAD=$(echo "$SKYPILOT_NODE_IPS" | head -n1)',
            *run,
        ]
    task["run"] = "\n".join(run) + "\n"
    return _header(group, plan_id) + _dump([task])


def _container(group: LaunchGroup, command: str) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "serve" if group.kind == "serve" else "train",
        "image": SERVE_IMAGE if group.kind == "serve" else TRAIN_IMAGE,
        "command": ["/bin/sh", "-c", command],
        "resources": {
            "limits": {"nvidia.com/gpu": group.where.gpus_per_node},
            "requests": {"ephemeral-storage": f"{group.disk_gb}Gi"},
        },
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    if group.kind == "serve":
        container["ports"] = [{"containerPort": group.port, "name": "http"}]
        container["readinessProbe"] = {"httpGet": {"path": "/health", "port": group.port}}
    else:
        container["workingDir"] = "/workspace"
        if group.files:
            container["volumeMounts"].append({"name": "config", "mountPath": "/workspace/config"})
    return container


def _pod(group: LaunchGroup, command: str, labels: dict[str, str]) -> dict[str, Any]:
    volumes: list[dict[str, Any]] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
    if group.kind == "train" and group.files:
        volumes.append({"name": "config", "configMap": {"name": group.name}})
    spec: dict[str, Any] = {"containers": [_container(group, command)], "volumes": volumes}
    if group.kind == "train":
        spec["restartPolicy"] = "Never"
    return {"metadata": {"labels": labels}, "spec": spec}


def _train_command(group: LaunchGroup) -> str:
    run = group.run.replace("--job.config_file ", "--job.config_file config/")
    return f"{group.setup} && {run}"


def _job_spec(group: LaunchGroup, command: str, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"backoffLimit": 0, "template": _pod(group, command, labels)}
    if group.nodes > 1:
        spec = {"parallelism": group.nodes, "completions": group.nodes, "completionMode": "Indexed", **spec}
    return spec


def _training(group: LaunchGroup) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": group.name, "app.kubernetes.io/managed-by": "gpuplan"}
    config = (
        [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": group.name, "labels": labels},
                "data": dict(group.files),
            }
        ]
        if group.files
        else []
    )
    if group.nodes <= 1:
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": group.name, "labels": labels},
            "spec": _job_spec(group, _train_command(group), labels),
        }
        return [*config, job]
    head = f"{group.name}-workers-0-0.{group.name}"
    command = f"export NODE_RANK=$JOB_COMPLETION_INDEX HEAD={head} && {_train_command(group)}"
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": group.name, "labels": labels},
        "spec": {
            "network": {"enableDNSHostnames": True, "subdomain": group.name},
            "replicatedJobs": [
                {"name": "workers", "replicas": 1, "template": {"spec": _job_spec(group, command, labels)}}
            ],
        },
    }
    return [*config, jobset]


def _serving(group: LaunchGroup) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": group.name, "app.kubernetes.io/managed-by": "gpuplan"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": group.name, "labels": labels},
        "spec": {
            "replicas": group.nodes,
            "selector": {"matchLabels": {"app.kubernetes.io/name": group.name}},
            "template": _pod(group, group.run, labels),
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": group.name, "labels": labels},
        "spec": {
            "selector": {"app.kubernetes.io/name": group.name},
            "ports": [{"name": "http", "port": group.port, "targetPort": "http"}],
        },
    }
    return [deployment, service]


def kubernetes_manifests(groups: list[LaunchGroup], plan_id: str) -> str:
    """Every group's resources as one YAML document, a ``v1`` ``List`` of them (what ``kubectl get -o
    yaml`` prints and ``kubectl apply -f`` takes): one mapping, as the API's response schema says."""
    docs = [doc for g in groups for doc in (_training(g) if g.kind == "train" else _serving(g))]
    header = f"# gpuplan plan {plan_id}: apply with kubectl apply -f (a JobSet needs the JobSet controller)\n"
    return header + _dump([{"apiVersion": "v1", "kind": "List", "items": docs}])
