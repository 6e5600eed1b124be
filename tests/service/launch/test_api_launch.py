"""GET /v1/plans/{plan_id}/launch: stored plans as SkyPilot tasks (loaded by SkyPilot itself,
``sky.Task.from_yaml_config``) and Kubernetes manifests (validated strictly by kubernetes-validate, as
tests/deploy does), for a training plan on one node, one on several spot nodes, and a serving fleet."""

from __future__ import annotations

import copy
import re
import tomllib
import warnings
from collections.abc import Iterator
from typing import Any

import kubernetes_validate
import pytest
import yaml
from litestar.testing import TestClient

from service.launch.manifests import SKYPILOT_CLOUDS
from service.launch.targets import CONFIG_FILE, MIN_DISK_GB
from tests.deploy.test_kubernetes import K8S_VERSIONS
from tests.service.plans.test_fleet_choice import SMALL_SAVING

Client = TestClient[Any]

TRAIN = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "tokens": 20_000_000_000}
"""One node: the planner's cheapest is a single instance for this job on the shipped catalog."""
SPOT_TRAIN = {
    "kind": "train",
    "model": {"name": "Llama 3.1 70B"},
    "tokens": 20_000_000_000,
    "constraints": {"deadline_hours": 100, "spot": True},
}
"""Several spot nodes: the deadline needs more GPUs than one instance holds."""
MIXED = {**SMALL_SAVING, "mix_threshold": 0.004}
"""A serving fleet that mixes replica types (tests/service/plans/test_fleet_choice.py)."""


def _plan(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


@pytest.fixture(scope="module")
def train_plan(client: Client) -> dict[str, Any]:
    return _plan(client, TRAIN)


@pytest.fixture(scope="module")
def spot_plan(client: Client) -> dict[str, Any]:
    return _plan(client, SPOT_TRAIN)


@pytest.fixture(scope="module")
def serving_plan(client: Client) -> dict[str, Any]:
    return _plan(client, MIXED)


def _launch(client: Client, plan_id: str, fmt: str, **params: Any) -> str:
    response = client.get(f"/v1/plans/{plan_id}/launch", params={"format": fmt, **params})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/yaml")
    return response.text


@pytest.fixture(scope="module")
def sky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """SkyPilot itself (a test dependency; no cloud credentials needed to load a task), with its state
    directory (``~/.sky``) in a temporary home; its import-time deprecation warnings are its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("sky-home")))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import sky as skypilot  # imported here: a heavy import only these tests need

        yield skypilot


def _sky_task(sky: Any, text: str) -> dict[str, Any]:
    """The task as SkyPilot loads it (``sky.Task.from_yaml_config``, what ``sky.Task.from_yaml`` calls:
    the task, its resources and its service validated against SkyPilot's schemas; an unknown field or
    a bad value raises ``ValueError``), returned as the YAML's mapping."""
    task: dict[str, Any] = yaml.safe_load(text)
    loaded = sky.Task.from_yaml_config(copy.deepcopy(task))  # it pops what it reads
    assert loaded.num_nodes == task.get("num_nodes", 1)
    assert (loaded.service is not None) == ("service" in task)
    return task


def _accelerators(task: dict[str, Any]) -> tuple[str, int]:
    name, count = task["resources"]["accelerators"].split(":")
    return name, int(count)


def _toml_in(setup: str) -> dict[str, Any]:
    found = re.search(rf"cat > {CONFIG_FILE} <<'GPUPLAN_EOF'\n(.*?)\nGPUPLAN_EOF", setup, re.S)
    assert found, setup
    return tomllib.loads(found.group(1))


def _check_layout(config: dict[str, Any], layout: dict[str, Any]) -> None:
    """The torchtitan config runs the plan's layout."""
    parallel, training = config["parallelism"], config["training"]
    assert parallel["tensor_parallel_degree"] == layout["tp"]
    assert parallel["pipeline_parallel_degree"] == layout["pp"]
    assert parallel["context_parallel_degree"] == layout["cp"]
    dp = parallel["data_parallel_replicate_degree"] * parallel["data_parallel_shard_degree"]
    assert dp == layout["dp"]
    assert training["global_batch_size"] * training["seq_len"] == layout["global_batch_tokens"]
    assert config["activation_checkpoint"]["mode"] == layout["recompute"]
    assert (config["model"]["name"], config["model"]["flavor"]) == ("llama3", "8B")  # torchtitan's Llama 3 8B


def test_a_one_node_training_plan_is_a_skypilot_task_skypilot_accepts(
    sky: Any, client: Client, train_plan: dict[str, Any]
) -> None:
    choice, offer = train_plan["choice"], train_plan["choice"]["offer"]
    assert choice["instances"] == 1
    task = _sky_task(sky, _launch(client, train_plan["plan_id"], "skypilot"))
    resources = task["resources"]
    assert task["num_nodes"] == 1
    assert _accelerators(task)[1] == choice["gpu_count"]
    assert resources["use_spot"] is False
    assert resources["disk_size"] >= MIN_DISK_GB
    assert offer["provider"] in SKYPILOT_CLOUDS
    assert resources["infra"] == f"{offer['provider']}/{offer['region']}"
    config = _toml_in(task["setup"])
    _check_layout(config, choice["layout"])
    assert (
        config["training"]["steps"] * choice["layout"]["global_batch_tokens"]
        >= train_plan["estimate"]["work"]
    )
    assert f"--nproc_per_node={choice['gpu_count']} --standalone" in task["run"]


def test_a_multi_node_spot_plan_launches_every_node_on_spot(
    sky: Any, client: Client, spot_plan: dict[str, Any]
) -> None:
    choice = spot_plan["choice"]
    assert choice["instances"] > 1 and choice["offer"]["pricing"] == "spot"
    per_node = choice["gpu_count"] // choice["instances"]
    task = _sky_task(sky, _launch(client, spot_plan["plan_id"], "skypilot"))
    assert task["num_nodes"] == choice["instances"]
    assert task["resources"]["use_spot"] is True
    assert _accelerators(task)[1] == per_node
    assert "--node_rank=$NODE_RANK --master_addr=$HEAD" in task["run"]
    assert "SKYPILOT_NODE_RANK" in task["run"] and "SKYPILOT_NODE_IPS" in task["run"]


def _validate(resource: dict[str, Any]) -> None:
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(resource, version, strict=True)


def _manifests(text: str) -> list[dict[str, Any]]:
    """The resources of the one YAML document the kubernetes format is: a ``v1`` ``List`` (validated
    as one: its items are validated by the tests, each against its own kind)."""
    listed: dict[str, Any] = yaml.safe_load(text)
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    items: list[dict[str, Any]] = listed["items"]
    return items


def test_a_multi_node_plan_is_a_jobset_of_an_indexed_job_that_validates(
    client: Client, spot_plan: dict[str, Any]
) -> None:
    choice = spot_plan["choice"]
    docs = _manifests(_launch(client, spot_plan["plan_id"], "kubernetes"))
    config, jobset = docs
    _validate(config)
    assert (
        tomllib.loads(config["data"][CONFIG_FILE])["parallelism"]["tensor_parallel_degree"]
        == choice["layout"]["tp"]
    )
    assert (jobset["apiVersion"], jobset["kind"]) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert set(jobset["spec"]) == {"network", "replicatedJobs"}
    (workers,) = jobset["spec"]["replicatedJobs"]
    assert set(workers) == {"name", "replicas", "template"} and workers["replicas"] == 1
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "workers"}, **workers["template"]}
    _validate(job)  # the JobSet's Job template is a valid batch/v1 Job
    spec = job["spec"]
    assert spec["parallelism"] == spec["completions"] == choice["instances"]
    assert spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == choice["gpu_count"] // choice["instances"]
    command = container["command"][-1]
    name = jobset["metadata"]["name"]
    assert f"NODE_RANK=$JOB_COMPLETION_INDEX HEAD={name}-workers-0-0.{name}" in command
    assert jobset["spec"]["network"] == {"enableDNSHostnames": True, "subdomain": name}


def test_a_one_node_plan_is_a_job_that_validates(client: Client, train_plan: dict[str, Any]) -> None:
    config, job = _manifests(_launch(client, train_plan["plan_id"], "kubernetes"))
    _validate(config)
    _validate(job)
    assert job["kind"] == "Job"
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == train_plan["choice"]["gpu_count"]
    assert f"--job.config_file config/{CONFIG_FILE}" in container["command"][-1]


def test_a_serving_fleet_is_a_deployment_and_service_per_replica_type(
    client: Client, serving_plan: dict[str, Any]
) -> None:
    replicas = serving_plan["choice"]["replicas"]
    docs = _manifests(_launch(client, serving_plan["plan_id"], "kubernetes"))
    assert [d["kind"] for d in docs] == ["Deployment", "Service"] * len(replicas)
    for doc in docs:
        _validate(doc)
    for replica, deployment in zip(replicas, docs[::2], strict=True):
        assert deployment["spec"]["replicas"] == replica["instances"]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == replica["gpus"] // replica["instances"]
        command = container["command"][-1]
        assert command.startswith("vllm serve meta-llama/Llama-2-7b-hf")
        assert f"--tensor-parallel-size {replica['tp']}" in command


def test_each_replica_type_is_a_skypilot_service_and_a_mix_needs_one_named(
    sky: Any, client: Client, serving_plan: dict[str, Any]
) -> None:
    replicas = serving_plan["choice"]["replicas"]
    assert len(replicas) >= 2  # the fleet mixes types
    mixed = client.get(f"/v1/plans/{serving_plan['plan_id']}/launch", params={"format": "skypilot"})
    assert mixed.status_code == 422 and mixed.json()["field"] == "replica_type"
    for i, replica in enumerate(replicas):
        task = _sky_task(sky, _launch(client, serving_plan["plan_id"], "skypilot", replica_type=i))
        assert task["service"]["replicas"] == replica["instances"]
        assert _accelerators(task)[1] == replica["gpus"] // replica["instances"]
        assert f"--tensor-parallel-size {replica['tp']}" in task["run"]


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"format": "helm"}, 400, "format"),
        ({}, 400, "format"),
        ({"format": "kubernetes", "replica_type": 7}, 422, "replica_type"),
    ],
)
def test_bad_launch_requests_name_the_field(
    client: Client, serving_plan: dict[str, Any], params: dict[str, Any], status: int, field: str
) -> None:
    response = client.get(f"/v1/plans/{serving_plan['plan_id']}/launch", params=params)
    assert response.status_code == status, response.text
    assert field in response.text


def test_an_unknown_plan_is_404(client: Client) -> None:
    response = client.get("/v1/plans/pl-0000000000000000/launch", params={"format": "skypilot"})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


def test_a_lora_fine_tune_launches_trl_under_accelerate(sky: Any, client: Client) -> None:
    """Fine-tunes run on the standard stack (Transformers + PEFT + Accelerate): TRL's SFT script with
    the plan's micro-batch, accumulation and steps, LoRA at the workload's rank (examples/workloads)."""
    body = {
        "kind": "fine_tune",
        "model": {"name": "meta-llama/Llama-3.1-8B"},
        "method": "lora",
        "micro_batch": 4,
        "seq_len": 2048,
        "recompute": "selective",
        "tokens": 2_000_000_000,
        "lora_rank": 16,
    }
    plan = _plan(client, body)
    layout, choice = plan["choice"]["layout"], plan["choice"]
    task = _sky_task(sky, _launch(client, plan["plan_id"], "skypilot"))
    run = task["run"]
    assert run.startswith(f"accelerate launch --num_processes {choice['gpu_count']} -m trl.scripts.sft")
    for flag in (
        f"--per_device_train_batch_size {layout['micro_batch']}",
        f"--gradient_accumulation_steps {layout['gradient_accumulation']}",
        "--max_length 2048",
        "--gradient_checkpointing",
        "--use_peft --lora_r 16",
    ):
        assert flag in run
    steps = int(re.search(r"--max_steps (\d+)", run).group(1))  # type: ignore[union-attr]
    assert steps * layout["global_batch_tokens"] >= plan["estimate"]["work"]


def test_the_skypilot_schemas_refuse_what_skypilot_refuses(
    sky: Any, client: Client, train_plan: dict[str, Any]
) -> None:
    """SkyPilot refuses a misspelt field and a seller it does not know: the loads above can fail."""
    task = yaml.safe_load(_launch(client, train_plan["plan_id"], "skypilot"))
    with pytest.raises(ValueError, match="num_nodes"):
        _sky_task(sky, yaml.safe_dump({**task, "num_node": 2}))
    with pytest.raises(ValueError, match="spheron"):
        _sky_task(sky, yaml.safe_dump({**task, "resources": {**task["resources"], "infra": "spheron/us"}}))


def test_a_seller_skypilot_does_not_know_gets_no_infra(sky: Any, client: Client) -> None:
    plan = _plan(client, {**TRAIN, "constraints": {"providers": ["spheron"]}})
    assert plan["choice"]["offer"]["provider"] == "spheron" and "spheron" not in SKYPILOT_CLOUDS
    text = _launch(client, plan["plan_id"], "skypilot")
    assert "# spheron is not a SkyPilot cloud: no infra is set" in text
    assert "infra" not in _sky_task(sky, text)["resources"]
