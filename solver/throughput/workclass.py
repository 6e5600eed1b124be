"""Workload classes: the unit the throughput model calibrates its efficiency on.

An efficiency (MFU, or share of memory bandwidth) belongs to *what kind of work runs on which kind of
software*, not to a GPU: LLM pretraining on Megatron reaches a different MFU than a LoRA fine-tune in
Transformers, on every GPU alike. So every workload and every measured row falls in one class:

- ``pretrain`` — decoder LLM trained from scratch (all weights, long sequences, big batches);
- ``full_finetune`` — decoder LLM, all weights updated, usually smaller batches and shorter runs;
- ``lora`` — LoRA/QLoRA adapters on a frozen decoder (two passes instead of three; QLoRA dequantises);
- ``encoder_vision`` — training of encoders (BERT), encoder-decoders, CNNs and other vision models;
- ``prefill`` — inference forward passes over whole prompts (and encoder inference): compute-bound;
- ``decode`` — token generation: bound by memory bandwidth at small batches.

Batch (offline) inference of a decoder is a prompt pass followed by generation, so it draws on both
``prefill`` and ``decode``; its rows are filed as ``offline`` and calibrate the two together.

A row's software stack (``standard`` | ``optimized``) is read from its notes (``stack=…``) or, for the
shipped sources that predate that key, from :data:`SOURCE_STACK`.
"""

from __future__ import annotations

import functools
import re
from typing import Final, Literal

from solver.catalog.models import ModelArch
from solver.spec.workload import TRAINING_KINDS, ResolvedWorkload, Stack

__all__ = [
    "LEVEL_FREE_SOURCES",
    "SOURCE_STACK",
    "TRAINING_CLASSES",
    "RowClass",
    "WorkClass",
    "level_free",
    "notes_fields",
    "row_class",
    "row_stack",
    "workload_class",
]

WorkClass = Literal["pretrain", "full_finetune", "lora", "encoder_vision", "prefill", "decode"]
RowClass = Literal["pretrain", "full_finetune", "lora", "encoder_vision", "prefill", "decode", "offline"]
TRAINING_CLASSES: Final[frozenset[str]] = frozenset({"pretrain", "full_finetune", "lora", "encoder_vision"})

SOURCE_STACK: Final[dict[str, Stack]] = {
    "lambdal/deeplearning-benchmark": "optimized",  # NVIDIA DeepLearningExamples in NGC containers (AMP, fused)
    "IST-DASLab/llmq": "optimized",  # hand-written CUDA/C++ trainer with fused kernels
    "NVIDIA/TensorRT-LLM": "optimized",  # serving engine
    "mlcommons": "optimized",  # MLPerf submissions (TensorRT-LLM, vLLM, SGLang ...)
    "XiongjieDai/GPU-Benchmarks-on-LLM-Inference": "standard",  # llama.cpp, one sequence at a time
}
"""Stack of the shipped sources whose rows carry no ``stack=`` note (matched on the source prefix)."""

LEVEL_FREE_SOURCES: Final[dict[str, str]] = {
    "IST-DASLab/llmq": (
        "a hand-written single-GPU research trainer (1-8 GPUs, 1024-token sequences, no data-parallel "
        "production stack): 30-40 % faster per GPU than the production stacks on the same GPUs, so it "
        "informs how GPUs and models compare, not the level of the optimized stack"
    ),
}
"""Sources whose overall level is left free in the fit (its source effect has no prior), and why."""

_FIELD = re.compile(r"^\s*([a-z_]+)=([^;]*)$")


@functools.lru_cache(maxsize=8192)
def notes_fields(notes: str) -> dict[str, str]:
    """The leading ``key=value;`` pairs of a row's notes (``stack=optimized; method=lora; …``)."""
    fields: dict[str, str] = {}
    for part in notes.split(";"):
        match = _FIELD.match(part)
        if match is None:
            break
        fields[match.group(1)] = match.group(2).strip()
    return fields


def _is_llm(arch: ModelArch | None) -> bool:
    return arch is not None and arch.is_decoder_llm


def workload_class(rw: ResolvedWorkload) -> WorkClass:
    """The class a workload's throughput is calibrated in (batch inference: see the module docstring)."""
    if rw.kind in TRAINING_KINDS:
        if not _is_llm(rw.arch):
            return "encoder_vision"
        if rw.method != "full":
            return "lora"
        return "pretrain" if rw.kind == "train" else "full_finetune"
    return "decode" if rw.kind == "serving" and _is_llm(rw.arch) else "prefill"


def row_class(task: str, mode: str, arch: ModelArch | None, notes: str) -> RowClass:
    """The class of a measured row from its task, the model's mode and its notes."""
    if task in TRAINING_KINDS:
        if not _is_llm(arch) and arch is not None:
            return "encoder_vision"
        if arch is None:
            return "encoder_vision"  # models outside the catalog: the vision/encoder benchmark suites
        method = notes_fields(notes).get("method", "full")
        if method in ("lora", "qlora"):
            return "lora"
        return "full_finetune" if task == "fine_tune" else "pretrain"
    if mode == "decode":
        return "decode"
    if mode == "offline" and _is_llm(arch):
        return "offline"
    return "prefill"


def level_free(source: str) -> bool:
    """Whether a source's level is left free in the fit (:data:`LEVEL_FREE_SOURCES`)."""
    return any(source.startswith(prefix) for prefix in LEVEL_FREE_SOURCES)


def row_stack(source: str, notes: str) -> Stack:
    """The software stack a row was measured on: its ``stack=`` note, else its source's."""
    stated = notes_fields(notes).get("stack")
    if stated in ("standard", "optimized"):
        return "standard" if stated == "standard" else "optimized"
    for prefix, stack in SOURCE_STACK.items():
        if source.startswith(prefix):
            return stack
    return "optimized"
