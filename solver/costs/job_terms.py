"""What a job moves, keeps and risks besides compute: the workload's ``data`` and ``reliability``
fields, and the :class:`~solver.costs.charges.JobTerms` (with the rule behind each figure) derived from them.

Defaults when the workload does not say:

- **model download**: the weights at the workload's precision for fine-tuning and inference (a
  pre-training run starts from random weights and downloads none);
- **dataset** (marked derived in the plan): for text, the unique tokens as token ids — 2 bytes each
  for a vocabulary of at most 65,536 tokens, else 4, as tokenised training sets are stored (Megatron-LM's
  indexed dataset picks ``uint16`` below 65,500 ids and ``int32`` above, ``DType.optimal_dtype``;
  nanoGPT's GPT-2 ``.bin`` shards are ``uint16``); for images (vision and diffusion models), the
  samples as JPEG files of ImageNet's average size, :data:`IMAGE_BYTES` (ILSVRC2012's 1,281,167
  training images in its 138 GB training archive, image-net.org's download page); for batch
  inference, the prompts as text (4 bytes a token). Only what none of these covers stays 0, said so;
- **checkpoint**: what resuming needs — the trainable weights, the fp32 master copy and the optimizer
  state of the memory model (LoRA: the adapters and their state); two are kept (the newest and the one
  before, in case the newest is torn); inference writes none;
- **egress**: the result leaves the cloud once — the trained weights (LoRA: the adapters) at 16 bit,
  or the generated text (4 bytes a token).
"""

from __future__ import annotations

from typing import Final

import msgspec

from solver.costs.charges import JobTerms
from solver.memory.model_state import model_state, weight_bytes
from solver.spec.lora_targets import lora_adapter_params
from solver.spec.terms import DataSpec, ReliabilitySpec
from solver.spec.workload import ResolvedWorkload

__all__ = [
    "CHECKPOINTS_KEPT",
    "IMAGE_BYTES",
    "JobTermsWithRules",
    "job_terms",
]

CHECKPOINTS_KEPT: Final = 2
IMAGE_BYTES: Final = 138e9 / 1_281_167
"""An image sample: ImageNet-1k's training JPEGs average 108 kB (138 GB for 1,281,167 images)."""
IMAGE_FAMILIES: Final = frozenset({"vision", "diffusion"})
"""Model families whose samples are images."""
TEXT_BYTES_PER_TOKEN: Final = 4.0
"""UTF-8 text runs about 4 characters (bytes) a token for English with BPE tokenisers."""
_GB: Final = 1e9


class JobTermsWithRules(msgspec.Struct, frozen=True, kw_only=True):
    terms: JobTerms
    rules: dict[str, str]
    """Each figure's rule, by the name a plan's assumptions list it under."""


def _images_gb(samples: int) -> tuple[float, str]:
    return (
        samples * IMAGE_BYTES / _GB,
        f"derived: {samples:,} images × {IMAGE_BYTES / 1e3:,.0f} kB (ImageNet-1k's mean training JPEG:"
        " 138 GB / 1,281,167 images)",
    )


def _dataset_gb(
    rw: ResolvedWorkload, tokens: int | None, samples: int | None, epochs: float, output_len: int | None
) -> tuple[float, str]:
    """The dataset's size and its rule, from the work when the job does not state it."""
    arch = rw.arch
    if samples is not None and arch.family in IMAGE_FAMILIES:
        return _images_gb(samples)
    if rw.is_inference:
        if tokens is None or not output_len:
            return 0.0, "not given and not derivable (no tokens and output length): 0 GB"
        requests = tokens / output_len
        prompt = max(rw.seq_len - output_len, 0)
        size = requests * prompt * TEXT_BYTES_PER_TOKEN / _GB
        return (
            size,
            f"derived: {requests:,.0f} prompts of {prompt:,} tokens as text ({TEXT_BYTES_PER_TOKEN:g} B a token)",
        )
    id_bytes = 2 if arch.vocab_size <= 65_536 else 4
    unique: float | None = None
    if tokens is not None:
        unique = tokens / epochs
    elif samples is not None and rw.seq_len > 0 and arch.is_transformer:
        unique = float(samples * rw.seq_len)
    if unique is None:
        return 0.0, "not given and not derivable (samples without a sequence length): 0 GB"
    dtype = "uint16" if id_bytes == 2 else "int32"
    return (
        unique * id_bytes / _GB,
        f"derived: {unique:,.0f} unique tokens as {id_bytes}-byte token ids ({dtype} for a"
        f" {arch.vocab_size:,}-token vocabulary, as Megatron-LM's indexed datasets store them)",
    )


def _checkpoint_gb(rw: ResolvedWorkload) -> tuple[float, str]:
    if rw.is_inference:
        return 0.0, "inference writes no checkpoints"
    state = model_state(rw)
    if rw.method == "full":
        size = state.weights + state.master + state.optimizer + state.paged
        return size / _GB, "weights + fp32 master + optimizer state of the memory model"
    size = state.gradients + state.optimizer + state.paged  # adapter weights are as large as their grads
    return size / _GB, f"{rw.method} adapters and their optimizer state"


def _egress_gb(rw: ResolvedWorkload, tokens: int | None) -> tuple[float, str]:
    if rw.is_inference:
        size = (tokens or 0) * TEXT_BYTES_PER_TOKEN / _GB
        return size, f"the generated text ({TEXT_BYTES_PER_TOKEN:g} B a token)"
    if rw.method == "full":
        return rw.arch.params_b * 2.0, "the trained weights at 16 bit"
    adapters = lora_adapter_params(rw.arch, rw.lora_rank, rw.lora_targets)
    return adapters * 2.0 / _GB, "the trained adapters at 16 bit"


def job_terms(
    rw: ResolvedWorkload,
    *,
    tokens: int | None,
    samples: int | None,
    epochs: float,
    output_len: int | None,
    data: DataSpec | None,
    reliability: ReliabilitySpec | None,
) -> JobTermsWithRules:
    """The job's terms from its workload, with the rule of each derived figure (or "given")."""
    data = data or DataSpec()
    reliability = reliability or ReliabilitySpec()
    rules: dict[str, str] = {}

    def pick(name: str, given: float | None, derived: tuple[float, str]) -> float:
        if given is not None:
            rules[name] = "given"
            return given
        rules[name] = derived[1]
        return derived[0]

    dataset = pick("dataset_gb", data.dataset_gb, _dataset_gb(rw, tokens, samples, epochs, output_len))
    checkpoint = pick("checkpoint_gb", data.checkpoint_gb, _checkpoint_gb(rw))
    egress = pick("egress_gb", data.egress_gb, _egress_gb(rw, tokens))
    model = 0.0 if rw.kind == "train" else weight_bytes(rw) / _GB
    rules["model_download_gb"] = (
        "pre-training starts from random weights" if rw.kind == "train" else "the weights at their precision"
    )
    if rw.is_inference and data.checkpoint_gb is not None:
        checkpoint = 0.0
        rules["checkpoint_gb"] = "inference writes no checkpoints (the given size is not used)"
    restart = reliability.restart_minutes
    return JobTermsWithRules(
        terms=JobTerms(
            download_gb=model + dataset,
            dataset_gb=dataset,
            checkpoint_gb=checkpoint,
            checkpoints_kept=CHECKPOINTS_KEPT if checkpoint > 0 else 0,
            egress_gb=egress,
            checkpoint_every_hours=data.checkpoint_every_hours,
            loses_work=not rw.is_inference,
            interruptions_per_gpu_hour=reliability.interruptions_per_gpu_hour,
            restart_hours=None if restart is None else restart / 60,
            preemptions_per_hour=reliability.preemptions_per_hour,
        ),
        rules=rules,
    )
