"""The stack's commands a plan's layout becomes: torchtitan's job config keys (its JobConfig), the
``vllm serve`` line, and the model's Hugging Face repository from the catalog."""

from __future__ import annotations

import tomllib

from service.launch.commands import TrainSetup, hf_repo, torchtitan_model, torchtitan_toml, vllm_serve_line
from solver import Layout, lookup_model


def _layout(**change: object) -> Layout:
    base: dict[str, object] = {
        "tp": 2, "pp": 4, "vpp": 2, "cp": 1, "dp": 8, "zero": "zero1", "micro_batch": 1,
        "gradient_accumulation": 16, "recompute": "full", "global_batch_tokens": 8192 * 128,
    }  # fmt: skip
    return Layout(**{**base, **change})  # type: ignore[arg-type]


def test_an_interleaved_pipeline_layout_becomes_torchtitan_keys() -> None:
    arch = lookup_model("Llama 3.1 70B")
    setup = TrainSetup(arch=arch, layout=_layout(), seq_len=8192, steps=50, nodes=8, gpus_per_node=8)
    config = tomllib.loads(torchtitan_toml(setup))
    assert config["model"] == {"name": "llama3", "flavor": "70B"}
    parallel = config["parallelism"]
    assert (parallel["tensor_parallel_degree"], parallel["pipeline_parallel_degree"]) == (2, 4)
    assert parallel["pipeline_parallel_schedule"] == "Interleaved1F1B"
    assert parallel["pipeline_parallel_layers_per_stage"] * 4 * 2 >= arch.layers  # 80 layers in 8 stages
    assert parallel["pipeline_parallel_microbatch_size"] == 1
    assert (parallel["data_parallel_replicate_degree"], parallel["data_parallel_shard_degree"]) == (1, 8)
    training = config["training"]
    assert training["local_batch_size"] == 16  # micro-batch × accumulation: the pipeline splits it
    assert training["global_batch_size"] == 128 and training["seq_len"] == 8192
    assert config["activation_checkpoint"]["mode"] == "full"


def test_data_parallel_without_zero_replicates() -> None:
    arch = lookup_model("Llama 3.1 8B")
    layout = _layout(tp=1, pp=1, vpp=1, zero="none", micro_batch=2, gradient_accumulation=4)
    config = tomllib.loads(
        torchtitan_toml(TrainSetup(arch=arch, layout=layout, seq_len=8192, steps=9, nodes=1, gpus_per_node=8))
    )
    parallel = config["parallelism"]
    assert (parallel["data_parallel_replicate_degree"], parallel["data_parallel_shard_degree"]) == (8, 1)
    assert "pipeline_parallel_schedule" not in parallel
    assert config["training"]["local_batch_size"] == 2


def test_a_model_torchtitan_does_not_ship_says_so() -> None:
    arch = lookup_model("Llama-2-7b")
    assert torchtitan_model(arch) is None
    text = torchtitan_toml(
        TrainSetup(arch=arch, layout=_layout(), seq_len=4096, steps=1, nodes=8, gpus_per_node=8)
    )
    assert "torchtitan ships no flavor for Llama 2 7B" in text


def test_vllm_serve_uses_the_catalog_repository_and_the_precision() -> None:
    arch = lookup_model("Llama-2-7b")
    assert hf_repo(arch) == "meta-llama/Llama-2-7b-hf"
    assert vllm_serve_line(arch, 2, "fp8") == (
        "vllm serve meta-llama/Llama-2-7b-hf --tensor-parallel-size 2 --quantization fp8 --port 8000"
    )
    assert "--quantization" not in vllm_serve_line(arch, 1, "bf16")
