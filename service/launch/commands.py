"""The stack's own commands for a stored plan: for training on the ``optimized`` stack a torchtitan job
config (TOML) and the ``torchrun`` line that starts it; on the ``standard`` stack (Transformers + PEFT +
Accelerate, the fine-tuning default) TRL's SFT script under ``accelerate launch``; for serving
``vllm serve`` and ``vllm bench serve`` lines; for batch inference ``vllm bench throughput``
(``vllm/benchmarks/throughput.py``: ``--backend --dataset-name random --input-len --output-len
--num-prompts --output-json`` and the engine's ``--model --tensor-parallel-size``).

Flags and keys follow the tools' own sources: torchtitan's ``JobConfig`` dataclasses
(``torchtitan/config/job_config.py``: ``[training] local_batch_size, global_batch_size, seq_len, steps,
dataset``; ``[parallelism] data_parallel_replicate_degree, data_parallel_shard_degree,
tensor_parallel_degree, pipeline_parallel_degree, pipeline_parallel_microbatch_size,
pipeline_parallel_schedule, pipeline_parallel_layers_per_stage, context_parallel_degree``; ``[activation_checkpoint] mode``; ``[lr_scheduler] warmup_steps``;
``[metrics] log_freq``) and its ``run_train.sh`` (``torchrun … -m torchtitan.train --job.config_file``);
TRL's ``trl sft`` flags (``ModelConfig``: ``--model_name_or_path --use_peft --lora_r --load_in_4bit``;
``SFTConfig``/``TrainingArguments``: ``--dataset_name --packing --max_length --per_device_train_batch_size
--gradient_accumulation_steps --gradient_checkpointing --max_steps --logging_steps --bf16 --output_dir``)
and ``accelerate launch`` (``--num_processes --num_machines --machine_rank --main_process_ip
--main_process_port --use_deepspeed --zero_stage -m``);
vLLM's ``vllm serve`` engine arguments (``--tensor-parallel-size``, ``--data-parallel-size``,
``--quantization``, ``--port``) and
``vllm bench serve``'s ``add_cli_args`` (``vllm/benchmarks/serve.py``: ``--dataset-name random
--random-input-len --random-output-len --request-rate --num-prompts --num-warmups --ignore-eos
--ready-check-timeout-sec --save-result --result-filename --metadata --percentile-metrics --metric-percentiles``).
"""

from __future__ import annotations

import math
import re
import shlex
from typing import Final

import msgspec

from solver import Layout, ModelArch

__all__ = [
    "SERVE_PORT",
    "TRL_DATASET",
    "BenchLine",
    "TrainSetup",
    "hf_repo",
    "torchrun_line",
    "torchtitan_model",
    "torchtitan_toml",
    "train_commands",
    "train_run",
    "trl_sft_line",
    "vllm_bench_line",
    "vllm_serve_line",
    "vllm_throughput_line",
]

SERVE_PORT: Final = 8000
"""The port ``vllm serve`` listens on (vLLM's default)."""

_TORCHTITAN_LLAMA3: Final = {"8B": "8B", "70B": "70B", "405B": "405B"}
"""The Llama 3 sizes torchtitan ships a ``llama3`` flavor for (its ``models/llama3/train_configs``:
``llama3_8b.toml``, ``llama3_70b.toml``, ``llama3_405b.toml``)."""

TRL_DATASET: Final = "trl-lib/Capybara"
"""The dataset of TRL's own SFT examples: a placeholder for the user's, packed to ``seq_len``."""

_QUANTISATION: Final = {"fp8": "fp8"}
"""Precisions ``vllm serve`` applies to a 16-bit checkpoint itself (``--quantization fp8``, dynamic
FP8); int8 and int4 need a checkpoint quantised beforehand, named by the user."""


def hf_repo(arch: ModelArch) -> str:
    """The model's Hugging Face repository: the alias written ``org/name``, else the repository of the
    ``config.json`` its shape was read from, else the catalog name."""
    for alias in arch.aliases:
        if "/" in alias:
            return alias
    found = re.search(r"huggingface\.co/([\w.-]+/[\w.-]+)", arch.source)
    return found.group(1) if found else arch.name


def torchtitan_model(arch: ModelArch) -> tuple[str, str] | None:
    """torchtitan's ``(name, flavor)`` for the model, where torchtitan ships one (None: it does not)."""
    found = re.fullmatch(r"Llama 3(?:\.\d)? (\d+B)", arch.name)
    if found and found.group(1) in _TORCHTITAN_LLAMA3:
        return "llama3", _TORCHTITAN_LLAMA3[found.group(1)]
    return None


class TrainSetup(msgspec.Struct, frozen=True, kw_only=True):
    """What a torchtitan run needs from a plan: the model, the layout, the sequence and the steps."""

    arch: ModelArch
    layout: Layout
    seq_len: int
    steps: int
    nodes: int
    gpus_per_node: int
    log_freq: int = 10
    description: str = ""
    stack: str = "optimized"
    """``optimized``: torchtitan; ``standard`` (Transformers + PEFT + Accelerate): TRL's SFT script."""
    method: str = "full"
    lora_rank: int = 8


def _data_parallel(layout: Layout) -> tuple[int, int]:
    """torchtitan's (replicate, shard) degrees: ZeRO-3 shards (FSDP2); ZeRO-1/2 shard as well, the
    closest torchtitan has (it shards parameters too); no ZeRO replicates (DDP)."""
    if layout.dp <= 1:
        return 1, 1
    return (layout.dp, 1) if layout.zero == "none" else (1, layout.dp)


def torchtitan_toml(setup: TrainSetup) -> str:
    """A torchtitan job config running the plan's layout for ``setup.steps`` steps."""
    layout = setup.layout
    replicate, shard = _data_parallel(layout)
    local = layout.micro_batch * layout.gradient_accumulation if layout.pp > 1 else layout.micro_batch
    sequences = max(1, layout.global_batch_tokens // max(setup.seq_len, 1))
    model = torchtitan_model(setup.arch)
    name, flavor = model if model else ("llama3", "8B")
    lines = [
        f"# {setup.description or setup.arch.name}",
        f"# layout: {layout.text()}",
        *(
            []
            if model
            else [f"# torchtitan ships no flavor for {setup.arch.name}: set [model] name and flavor to yours"]
        ),
        "[job]",
        'dump_folder = "./outputs"',
        f"description = {_toml_string(setup.description or setup.arch.name)}",
        "",
        "[metrics]",
        f"log_freq = {setup.log_freq}",
        "",
        "[model]",
        f'name = "{name}"',
        f'flavor = "{flavor}"',
        "",
        "[lr_scheduler]",
        f"warmup_steps = {max(1, setup.steps // 5)}",
        "",
        "[training]",
        f"local_batch_size = {local}",
        f"global_batch_size = {sequences}",
        f"seq_len = {setup.seq_len}",
        f"steps = {setup.steps}",
        'dataset = "c4"',
        "",
        "[parallelism]",
        f"data_parallel_replicate_degree = {replicate}",
        f"data_parallel_shard_degree = {shard}",
        f"tensor_parallel_degree = {layout.tp}",
        f"pipeline_parallel_degree = {layout.pp}",
        *_pipeline(setup),
        f"context_parallel_degree = {layout.cp}",
        "",
        "[activation_checkpoint]",
        f'mode = "{layout.recompute}"',
    ]
    return "\n".join(lines) + "\n"


def _pipeline(setup: TrainSetup) -> list[str]:
    """torchtitan's pipeline keys: the micro-batch, and an interleaved schedule with the layers per
    virtual stage when the layout has virtual stages (``vpp``)."""
    layout = setup.layout
    if layout.pp <= 1:
        return []
    lines = [f"pipeline_parallel_microbatch_size = {layout.micro_batch}"]
    if layout.vpp > 1:
        per_stage = math.ceil(setup.arch.layers / (layout.pp * layout.vpp))
        lines += [
            'pipeline_parallel_schedule = "Interleaved1F1B"',
            f"pipeline_parallel_layers_per_stage = {per_stage}",
        ]
    else:
        lines.append('pipeline_parallel_schedule = "1F1B"')
    return lines


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def torchrun_line(
    nodes: int, gpus_per_node: int, config: str, *, node_rank: str = "0", head: str = "localhost"
) -> str:
    """``torchrun`` starting ``torchtitan.train`` on this node (as torchtitan's ``run_train.sh``)."""
    if nodes <= 1:
        where = "--standalone"
    else:
        where = f"--node_rank={node_rank} --master_addr={head} --master_port=29500"
    return (
        f"torchrun --nnodes={nodes} --nproc_per_node={gpus_per_node} {where} "
        f"-m torchtitan.train --job.config_file {config}"
    )


def vllm_serve_line(arch: ModelArch, tp: int, precision: str) -> str:
    """``vllm serve`` for one replica: the model on ``tp`` GPUs, at the plan's precision."""
    quantisation = _QUANTISATION.get(precision)
    parts = [
        "vllm serve",
        shlex.quote(hf_repo(arch)),
        f"--tensor-parallel-size {tp}",
        *([f"--quantization {quantisation}"] if quantisation else []),
        f"--port {SERVE_PORT}",
    ]
    return " ".join(parts)


class BenchLine(msgspec.Struct, frozen=True, kw_only=True):
    """One request size's load on one replica: sizes, rate and how many requests to send."""

    input_tokens: int
    output_tokens: int
    requests_per_s: float
    prompts: int
    warmups: int
    result_file: str
    metadata: dict[str, str]


def vllm_bench_line(arch: ModelArch, line: BenchLine) -> str:
    """``vllm bench serve`` sending ``line``'s requests at its rate (Poisson arrivals), its result saved
    as JSON (what ``POST /v1/measurements?format=vllm_bench`` reads)."""
    metadata = " ".join(shlex.quote(f"{k}={v}") for k, v in line.metadata.items())
    return (
        f"vllm bench serve --backend vllm --model {shlex.quote(hf_repo(arch))} --port {SERVE_PORT} "
        f"--dataset-name random --random-input-len {line.input_tokens} "
        f"--random-output-len {line.output_tokens} --ignore-eos "
        f"--request-rate {line.requests_per_s:.4g} --num-prompts {line.prompts} --num-warmups {line.warmups} "
        f"--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 "
        f"--ready-check-timeout-sec 1200 --save-result --result-filename {shlex.quote(line.result_file)}"
        + (f" --metadata {metadata}" if metadata else "")
    )


def _accelerate(setup: TrainSetup, node_rank: str, head: str) -> str:
    """``accelerate launch`` over the plan's GPUs with its data-parallel sharding (DDP, or DeepSpeed at
    the layout's ZeRO stage)."""
    parts = [f"accelerate launch --num_processes {setup.nodes * setup.gpus_per_node}"]
    if setup.nodes > 1:
        parts.append(
            f"--num_machines {setup.nodes} --machine_rank {node_rank} --main_process_ip {head} --main_process_port 29500"
        )
    if setup.layout.zero != "none":
        parts.append(f"--use_deepspeed --zero_stage {setup.layout.zero.removeprefix('zero')}")
    return " ".join(parts)


def trl_sft_line(setup: TrainSetup, arch: ModelArch, *, node_rank: str = "0", head: str = "localhost") -> str:
    """TRL's SFT script (``trl sft``'s ``trl/scripts/sft.py``) under ``accelerate launch``, with the
    plan's micro-batch, accumulation, recompute, sequence length and steps, and LoRA/QLoRA as planned."""
    layout = setup.layout
    peft = []
    if setup.method in ("lora", "qlora"):
        peft = ["--use_peft", f"--lora_r {setup.lora_rank}"]
        if setup.method == "qlora":
            peft.append("--load_in_4bit")
    parts = [
        _accelerate(setup, node_rank, head),
        "-m trl.scripts.sft",
        f"--model_name_or_path {shlex.quote(hf_repo(arch))}",
        f"--dataset_name {TRL_DATASET} --packing --max_length {setup.seq_len}",
        f"--per_device_train_batch_size {layout.micro_batch}",
        f"--gradient_accumulation_steps {layout.gradient_accumulation}",
        *(["--gradient_checkpointing"] if layout.recompute != "none" else []),
        f"--max_steps {setup.steps} --logging_steps {setup.log_freq} --bf16 --output_dir outputs",
        *peft,
    ]
    return " ".join(parts)


def train_commands(setup: TrainSetup, config_file: str) -> tuple[list[str], dict[str, str]]:
    """The setup and run lines of the plan's stack, and the files they read (torchtitan's config)."""
    if setup.stack == "standard":
        return ["pip install trl peft accelerate deepspeed bitsandbytes"], {}
    return ["pip install torchtitan"], {config_file: torchtitan_toml(setup)}


def train_run(setup: TrainSetup, config_file: str, *, node_rank: str = "0", head: str = "localhost") -> str:
    """The line that runs the plan's training on one node."""
    if setup.stack == "standard":
        return trl_sft_line(setup, setup.arch, node_rank=node_rank, head=head)
    return torchrun_line(setup.nodes, setup.gpus_per_node, config_file, node_rank=node_rank, head=head)


def vllm_throughput_line(
    arch: ModelArch, tp: int, input_len: int, output_len: int, prompts: int, result: str
) -> str:
    """``vllm bench throughput`` (offline batch inference, ``vllm/benchmarks/throughput.py``): random
    prompts of the plan's sizes on one ``tp``-GPU engine, the result saved as JSON."""
    return (
        f"vllm bench throughput --backend vllm --model {shlex.quote(hf_repo(arch))} --tensor-parallel-size {tp} "
        f"--dataset-name random --input-len {input_len} --output-len {output_len} --num-prompts {prompts} "
        f"--output-json {shlex.quote(result)}"
    )
