"""The workload spec every endpoint shares, and its semantic validation.

:class:`Workload` is what a request carries (decoded by msgspec, which enforces the field types and the
``Meta`` bounds); :func:`resolve_workload` checks what the types cannot (field combinations, the model's
limits, the parallel layout) and returns a :class:`ResolvedWorkload` with the catalog architecture and
every default filled in. Each failure is an :class:`~solver.errors.InvalidWorkload` naming its field.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec
from msgspec import Meta

from solver.catalog.models import ModelArch, lookup_model
from solver.catalog.precisions import KvCache
from solver.errors import InvalidWorkload
from solver.spec.lora_targets import DEFAULT_LORA_TARGETS, LoraModule, LoraPreset, resolve_lora_targets

__all__ = [
    "DEFAULT_SEQ_LEN",
    "DEFAULT_STACK",
    "INFERENCE_KINDS",
    "LAYOUT_FIELDS",
    "RECOMPUTE_CHOICES",
    "TRAINING_KINDS",
    "TRAINING_ONLY_FIELDS",
    "Attention",
    "EfficiencyOverride",
    "JobFields",
    "MasterWeights",
    "Method",
    "ModelSpec",
    "Offload",
    "Optimizer",
    "Precision",
    "Recompute",
    "ResolvedWorkload",
    "Sharding",
    "Stack",
    "Workload",
    "WorkloadKind",
    "resolve_workload",
    "serving_refusal",
]

WorkloadKind = Literal["train", "fine_tune", "batch_inference", "serving"]
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4"]
Method = Literal["full", "lora", "qlora"]
Optimizer = Literal["adamw", "adamw_8bit", "paged_adamw", "paged_adamw_8bit", "lion", "sgd", "adafactor"]
Sharding = Literal["none", "zero1", "zero2", "zero3"]
Recompute = Literal["none", "selective", "full"]
Stack = Literal["standard", "optimized"]
Attention = Literal["flash", "eager"]
MasterWeights = Literal["fp32", "none"]
Offload = Literal["none", "optimizer", "optimizer_and_params"]

INFERENCE_KINDS: Final[frozenset[str]] = frozenset({"batch_inference", "serving"})
TRAINING_KINDS: Final[frozenset[str]] = frozenset({"train", "fine_tune"})
"""The kinds that update weights (and the tasks of training profile rows)."""
DEFAULT_SEQ_LEN: Final = 2048
"""``seq_len`` when the request leaves it out: ``min(2048, model max_seq_len)``."""
DEFAULT_STACK: Final[dict[str, Stack]] = {
    "train": "optimized",
    "fine_tune": "standard",
    "batch_inference": "optimized",
    "serving": "optimized",
}
"""``stack`` when the request leaves it out: pretraining runs on Megatron/NeMo/torchtitan-style stacks,
fine-tunes on Transformers/PEFT/Accelerate, inference on serving engines (vLLM, TensorRT-LLM, SGLang)."""

_Positive = Meta(ge=1)
_Name = Annotated[str, Meta(min_length=1, max_length=200, description="A catalog model name or alias.")]
_Count = Annotated[int, Meta(ge=1, le=1_000_000)]


class ModelSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Which model: a catalog ``name``, or an explicit architecture (all of its required fields).

    An explicit shape is bounded far above every model built (160 layers, width 25k, 256k vocabulary,
    10M context, 384 experts) and far below where memory and FLOP sums lose meaning: a shape beyond
    the bounds is a 400 naming the field, not an estimate in the quintillions of bytes.
    """

    name: _Name | None = None
    params_b: Annotated[float, Meta(gt=0, le=100_000, description="Total parameters, billions.")] | None = (
        None
    )
    layers: Annotated[int, _Positive, Meta(le=10_000, description="Transformer layers.")] | None = None
    hidden_size: (
        Annotated[int, _Positive, Meta(le=1_048_576, description="Model (embedding) width.")] | None
    ) = None
    intermediate_size: (
        Annotated[int, _Positive, Meta(le=4_194_304, description="MLP width (one expert's).")] | None
    ) = None
    attention_heads: Annotated[int, _Positive, Meta(le=65_536, description="Query heads.")] | None = None
    kv_heads: Annotated[int, _Positive, Meta(le=65_536, description="Key/value heads (GQA/MQA).")] | None = (
        None
    )
    vocab_size: Annotated[int, _Positive, Meta(le=16_777_216, description="Vocabulary size.")] | None = None
    max_seq_len: (
        Annotated[int, _Positive, Meta(le=1_000_000_000, description="Longest supported context.")] | None
    ) = None
    head_dim: (
        Annotated[int, _Positive, Meta(le=65_536, description="Head size if not hidden/heads.")] | None
    ) = None
    experts: Annotated[int, _Positive, Meta(le=1_048_576, description="MoE experts per layer.")] | None = None
    active_experts: (
        Annotated[int, _Positive, Meta(le=65_536, description="MoE experts routed per token.")] | None
    ) = None
    active_params_b: (
        Annotated[float, Meta(gt=0, le=100_000, description="MoE params active per token, billions.")] | None
    ) = None


_REQUIRED_ARCH_FIELDS: Final = (
    "params_b",
    "layers",
    "hidden_size",
    "intermediate_size",
    "attention_heads",
    "kv_heads",
    "vocab_size",
)
_OPTIONAL_ARCH_FIELDS: Final = ("max_seq_len", "head_dim", "experts", "active_experts", "active_params_b")


class EfficiencyOverride(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """An efficiency the user measured or wants assumed instead of the calibrated one (echoed back).

    ``mfu`` is the share of the dense peak at the job's precision that compute-bound work reaches
    (training, and the prompt pass of inference); ``bandwidth_utilization`` the share of memory
    bandwidth that token generation reaches.
    """

    mfu: Annotated[float, Meta(gt=0, le=1, description="Model FLOPs utilisation (0-1].")] | None = None
    bandwidth_utilization: (
        Annotated[float, Meta(gt=0, le=1, description="Share of memory bandwidth in decoding (0-1].")] | None
    ) = None


class JobFields(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """What runs and how, without the kind or the parallel layout: shared by memory/throughput queries
    and plans.

    A plan request (:mod:`solver.spec.plan`) is one of these tagged by its ``kind`` (the planner
    chooses GPU count, tensor parallelism and sharding); a :class:`Workload` adds the kind as a field
    and the layout.
    """

    model: ModelSpec
    precision: Annotated[
        Precision,
        Meta(
            description=(
                "Weight precision. Training in bf16/fp16 keeps an fp32 master copy unless master_weights"
                " is none (pure 16-bit)."
            )
        ),
    ] = "bf16"
    method: Annotated[Method, Meta(description="full, lora, or qlora (LoRA on a 4-bit base).")] = "full"
    lora_rank: Annotated[int, Meta(ge=1, le=4096, description="LoRA rank r.")] = 8
    lora_targets: Annotated[
        LoraPreset | Annotated[list[Annotated[str, Meta(min_length=1, max_length=64)]], Meta(max_length=32)],
        Meta(
            description=(
                "Linear layers that carry LoRA adapters: a preset (qv, qkv, attention = q/k/v/o, mlp,"
                " all_linear) or a list of module names (q_proj, k_proj, v_proj, o_proj, gate_proj,"
                " up_proj, down_proj, or aliases such as wq, query, w1, fc1, qkv_proj). Default qv,"
                " PEFT's default for Llama-family models."
            )
        ),
    ] = DEFAULT_LORA_TARGETS
    lora_dropout: Annotated[
        float,
        Meta(
            ge=0.0,
            lt=1.0,
            description=(
                "LoRA dropout probability (PEFT's lora_dropout, default 0). Above 0 every adapter keeps its"
                " dropped-out input and mask for backward."
            ),
        ),
    ] = 0.0
    optimizer: Annotated[
        Optimizer,
        Meta(
            description=(
                "Optimizer (training kinds only): adamw (torch), adamw_8bit (bitsandbytes, 2 B/param of"
                " state), paged_adamw and paged_adamw_8bit (bitsandbytes, state in CUDA unified memory"
                " the driver can page to host), lion (one momentum), sgd (with momentum), adafactor."
            )
        ),
    ] = "adamw"
    optimizer_in_backward: Annotated[
        bool,
        Meta(
            description=(
                "Run each parameter's optimizer step inside backward as soon as its gradient is ready,"
                " so the full set of gradients never coexists (needs gradient_accumulation_steps 1)."
            )
        ),
    ] = False
    master_weights: Annotated[
        MasterWeights,
        Meta(
            description=(
                "Training in bf16/fp16: fp32 keeps an fp32 master copy, fp32 gradients and fp32 optimizer"
                " state (mixed precision); none trains the 16-bit weights directly (pure bf16), with"
                " 16-bit gradients and optimizer state in the parameter dtype."
            )
        ),
    ] = "fp32"
    offload: Annotated[
        Offload,
        Meta(
            description=(
                "CPU offload (ZeRO-Offload / FSDP CPU offload): optimizer moves the master copy and the"
                " optimizer state (and its step) to host memory; optimizer_and_params also the weights,"
                " streamed to the GPU layer by layer."
            )
        ),
    ] = "none"
    attention: Annotated[
        Attention,
        Meta(
            description=(
                "Attention kernel: flash (SDPA/FlashAttention, never stores the s x s score matrix) or"
                " eager (materialises the scores, which backward keeps)."
            )
        ),
    ] = "flash"
    recompute: (
        Annotated[
            Recompute,
            Meta(
                description=(
                    "Activation checkpointing: none keeps every activation; selective saves each layer's"
                    " input, attention output and every other matmul output and recomputes the rest"
                    " (PyTorch selective activation checkpointing); full keeps only each layer's input."
                    " Left out (auto): plans and throughput estimates use the least checkpointing that"
                    " fits the GPU's memory; a memory estimate assumes none (state a level to see it)."
                )
            ),
        ]
        | None
    ) = None
    gradient_accumulation_steps: Annotated[
        int,
        Meta(
            ge=1,
            le=1_000_000,
            description=(
                "Micro-batches per optimizer step. Above 1 the gradients stay allocated through the"
                " next micro-batch's forward pass, on top of its activations."
            ),
        ),
    ] = 1
    batch_size: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=1_000_000,
                description=(
                    "Memory estimates and inference: sequences (or samples) per GPU (default 1). Training"
                    " throughput and plans: the global batch in sequences per optimizer step (left out:"
                    " global_batch_tokens, or the rule by model size); the micro-batch is micro_batch."
                ),
            ),
        ]
        | None
    ) = None
    micro_batch: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=1_000_000,
                description=(
                    "Training: sequences per GPU in one micro-batch. Left out, the planner takes the"
                    " micro-batch that fits each rank's memory within its share of the global batch."
                ),
            ),
        ]
        | None
    ) = None
    global_batch_tokens: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=10**9,
                description=(
                    "Training: tokens per optimizer step (dp x micro_batch x accumulation x seq_len)."
                    " Left out: batch_size x seq_len when batch_size is given, else the documented rule"
                    " by model size. Never exceeded."
                ),
            ),
        ]
        | None
    ) = None
    seq_len: (
        Annotated[
            int, Meta(ge=1, le=100_000_000, description="Tokens per sequence; default min(2048, model max).")
        ]
        | None
    ) = None
    stack: (
        Annotated[
            Stack,
            Meta(
                description=(
                    "Software stack: optimized (Megatron/NeMo/torchtitan-style fused kernels and overlap; "
                    "serving engines for inference) or standard (Transformers/PEFT/Accelerate). Default: "
                    "optimized for train and inference, standard for fine_tune."
                )
            ),
        ]
        | None
    ) = None
    efficiency: EfficiencyOverride | None = None
    kv_cache: Annotated[
        KvCache,
        Meta(
            description=(
                "Inference: how the KV cache is stored, auto (16-bit, the engines' default) or fp8 "
                "(--kv-cache-dtype fp8); the memory model and the throughput estimates use the same width."
            )
        ),
    ] = "auto"


TRAINING_ONLY_FIELDS: Final = (
    "optimizer",
    "optimizer_in_backward",
    "master_weights",
    "offload",
    "recompute",
    "gradient_accumulation_steps",
    "micro_batch",
    "global_batch_tokens",
    "efficiency",
    "lora_dropout",
)
"""The :class:`JobFields` only a training job uses: a serving request that states one is refused."""

_JOB_DEFAULTS: Final = {f.name: f.default for f in msgspec.structs.fields(JobFields)}


_ADAPTER_FIELDS: Final = ("method", "lora_rank", "lora_targets")


def serving_refusal(job: JobFields) -> tuple[str, str] | None:
    """The first field a serving request states that the serving engine model cannot honour, with why:
    one of :data:`TRAINING_ONLY_FIELDS`, or a LoRA adapter (the engine serves the base model)."""
    for fields, why in (
        (TRAINING_ONLY_FIELDS, "applies to training only; serving sizes inference replicas"),
        (_ADAPTER_FIELDS, "the serving engine model serves the base model: LoRA adapters are not modelled"),
    ):
        field = next((f for f in fields if getattr(job, f) != _JOB_DEFAULTS[f]), None)
        if field is not None:
            return field, why
    return None


class Workload(JobFields, forbid_unknown_fields=True, kw_only=True):
    """A deep-learning job to size: what runs, on which model, how, and on how many GPUs."""

    kind: Annotated[
        WorkloadKind,
        Meta(description="train (from scratch), fine_tune, batch_inference or serving (online)."),
    ]
    sharding: (
        Annotated[
            Sharding,
            Meta(
                description=(
                    "ZeRO/FSDP stage over the data-parallel group: zero1 shards optimizer state, zero2 also"
                    " gradients, zero3 also weights. Left out: none for a memory estimate, the layout"
                    " search's choice for training throughput."
                )
            ),
        ]
        | None
    ) = None
    gpu_count: Annotated[_Count, Meta(description="GPUs in the job.")] = 1
    tp: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=1024,
                description=(
                    "Tensor-parallel degree (inside one NVLink domain). Left out: 1 for a memory estimate,"
                    " the layout search's choice for training throughput."
                ),
            ),
        ]
        | None
    ) = None
    pp: (
        Annotated[
            int,
            Meta(ge=1, le=1024, description="Pipeline-parallel stages (1F1B; left out: 1 or the search's)."),
        ]
        | None
    ) = None
    vpp: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=64,
                description="Virtual (interleaved) stages per pipeline rank (left out: 1 or the search's).",
            ),
        ]
        | None
    ) = None
    cp: (
        Annotated[
            int,
            Meta(ge=1, le=1024, description="Context-parallel degree (left out: 1 or the search's)."),
        ]
        | None
    ) = None


class ResolvedWorkload(msgspec.Struct, frozen=True, kw_only=True):
    """A validated workload with its architecture and every default filled in.

    ``seq_len`` is the effective sequence length (0 for models without one, such as CNNs); ``dp`` is the
    data-parallel degree ``gpu_count // tp`` that ZeRO stages shard over; ``lora_targets`` the canonical
    module names the adapters sit on (empty for full training).
    """

    kind: WorkloadKind
    arch: ModelArch
    precision: Precision
    method: Method
    lora_rank: int
    optimizer: Optimizer
    sharding: Sharding
    recompute: Recompute
    batch_size: int
    recompute_auto: bool = False
    """Whether ``recompute`` was left to the planner (it then tries the least checkpointing that fits)."""
    attention: Attention = "flash"
    master_weights: MasterWeights = "fp32"
    optimizer_in_backward: bool = False
    offload: Offload = "none"
    lora_targets: tuple[LoraModule, ...] = ()
    lora_dropout: float = 0.0
    gradient_accumulation_steps: int = 1
    seq_len: int
    gpu_count: int
    tp: int
    dp: int
    stack: Stack = "optimized"
    efficiency: EfficiencyOverride | None = None
    kv_cache: KvCache = "auto"
    pp: int = 1
    vpp: int = 1
    cp: int = 1
    stated: frozenset[str] = frozenset()
    """The layout fields the request gave (``tp``, ``pp``, ``vpp``, ``cp``, ``sharding``,
    ``micro_batch``, ``recompute``): a layout search holds them and chooses the rest."""
    global_batch: int | None = None
    """The request's ``batch_size`` (for training throughput and plans: sequences per optimizer step)."""
    global_batch_tokens: int | None = None
    """The request's ``global_batch_tokens`` (tokens per optimizer step)."""

    @property
    def is_inference(self) -> bool:
        """Whether the workload only runs forward passes (no gradients or optimizer)."""
        return self.kind in INFERENCE_KINDS


def _explicit_arch(spec: ModelSpec) -> ModelArch:
    """Build a :class:`ModelArch` from an explicit architecture, checking each field."""
    values = {field: getattr(spec, field) for field in _REQUIRED_ARCH_FIELDS + _OPTIONAL_ARCH_FIELDS}
    for field in _REQUIRED_ARCH_FIELDS:
        if values[field] is None:
            raise InvalidWorkload(
                f"model.{field}", "is required for an explicit architecture (or give model.name)"
            )
    for field, value in values.items():
        if value is not None and value <= 0:
            raise InvalidWorkload(f"model.{field}", f"must be positive, got {value}")
    heads, kv_heads = int(values["attention_heads"]), int(values["kv_heads"])
    if kv_heads > heads or heads % kv_heads:
        raise InvalidWorkload("model.kv_heads", f"must divide attention_heads ({heads}), got {kv_heads}")
    if values["head_dim"] is None and values["hidden_size"] % heads:
        raise InvalidWorkload(
            "model.attention_heads",
            f"must divide hidden_size ({values['hidden_size']}) unless head_dim is given",
        )
    experts = int(values["experts"] or 1)
    active_experts = int(values["active_experts"] or 1)
    if active_experts > experts:
        raise InvalidWorkload(
            "model.active_experts", f"must not exceed experts ({experts}), got {active_experts}"
        )
    active_params_b = values["active_params_b"]
    if active_params_b is not None and active_params_b > values["params_b"]:
        raise InvalidWorkload("model.active_params_b", "must not exceed params_b")
    max_seq_len = int(values["max_seq_len"] or 1_000_000_000)
    return ModelArch(
        name="custom",
        family="decoder",
        params_b=float(values["params_b"]),
        layers=int(values["layers"]),
        hidden_size=int(values["hidden_size"]),
        intermediate_size=int(values["intermediate_size"]),
        attention_heads=heads,
        kv_heads=kv_heads,
        vocab_size=int(values["vocab_size"]),
        max_seq_len=max_seq_len,
        head_dim=values["head_dim"],
        experts=experts,
        active_experts=active_experts,
        active_params_b=None if active_params_b is None else float(active_params_b),
        source="explicit architecture in the request",
    )


def _resolve_model(spec: ModelSpec) -> ModelArch:
    """The architecture a :class:`ModelSpec` names: exactly one of ``name`` or an explicit shape."""
    given = [f for f in _REQUIRED_ARCH_FIELDS + _OPTIONAL_ARCH_FIELDS if getattr(spec, f) is not None]
    if spec.name is not None:
        if given:
            raise InvalidWorkload(
                "model", f"give either name or an explicit architecture, not both ({given[0]})"
            )
        if not spec.name.strip():
            raise InvalidWorkload("model.name", "must not be blank")
        return lookup_model(spec.name)
    if not given:
        raise InvalidWorkload(
            "model", "give a catalog name or an explicit architecture (params_b, layers, ...)"
        )
    return _explicit_arch(spec)


def _check_positive(w: Workload) -> None:
    fields = ("batch_size", "seq_len", "gpu_count", "tp", "pp", "vpp", "cp", "micro_batch", "lora_rank")
    for field in (*fields, "gradient_accumulation_steps", "global_batch_tokens"):
        value = getattr(w, field)
        if value is not None and value < 1:
            raise InvalidWorkload(field, f"must be at least 1, got {value}")


def _check_method(w: Workload, arch: ModelArch) -> None:
    if w.kind == "train" and w.method != "full":
        raise InvalidWorkload(
            "method", f"training from scratch updates every weight: use full, not {w.method}"
        )
    if w.method == "qlora" and w.precision not in ("nf4", "int4"):
        raise InvalidWorkload("precision", f"qlora needs a 4-bit base (nf4 or int4), got {w.precision}")
    if w.kind not in INFERENCE_KINDS and w.method == "full" and w.precision in ("int8", "int4", "nf4"):
        raise InvalidWorkload(
            "precision", f"full {w.kind} updates the weights, which cannot be {w.precision}: use lora/qlora"
        )
    if w.method != "full" and not arch.is_transformer:
        raise InvalidWorkload("method", f"LoRA adapters need a transformer model; {arch.name} is not one")
    if w.method != "full" and w.lora_rank > arch.hidden_size:
        raise InvalidWorkload(
            "lora_rank", f"must not exceed the hidden size ({arch.hidden_size}), got {w.lora_rank}"
        )


def _check_training_options(w: Workload) -> None:
    """Combinations of training options that cannot run (ignored for inference kinds)."""
    if w.kind in INFERENCE_KINDS:
        return
    if w.optimizer_in_backward and w.gradient_accumulation_steps > 1:
        raise InvalidWorkload(
            "optimizer_in_backward",
            "steps each parameter as soon as its gradient exists, so gradients cannot be accumulated over "
            f"{w.gradient_accumulation_steps} micro-batches (set gradient_accumulation_steps to 1)",
        )


RECOMPUTE_CHOICES: Final[tuple[Recompute, ...]] = ("none", "selective", "full")
"""Activation checkpointing levels, least first (what a planner tries when the request leaves it out)."""

LAYOUT_FIELDS: Final = ("tp", "pp", "vpp", "cp", "sharding", "micro_batch", "recompute")
"""The fields of a training layout a request may state (the layout search chooses the others)."""


def _check_layout(w: Workload, arch: ModelArch) -> None:
    tp, pp, vpp, cp = w.tp or 1, w.pp or 1, w.vpp or 1, w.cp or 1
    if tp > w.gpu_count:
        raise InvalidWorkload("tp", f"must not exceed gpu_count ({w.gpu_count}), got {tp}")
    if w.gpu_count % tp:
        raise InvalidWorkload("gpu_count", f"must be a multiple of tp ({tp}), got {w.gpu_count}")
    if w.gpu_count % (tp * pp * cp):
        raise InvalidWorkload(
            "gpu_count", f"must be a multiple of tp x pp x cp ({tp * pp * cp}), got {w.gpu_count}"
        )
    if max(tp, pp, cp, vpp) > 1 and not arch.is_transformer:
        field = "tp" if tp > 1 else "pp" if pp > 1 else "cp" if cp > 1 else "vpp"
        raise InvalidWorkload(field, f"model parallelism needs a transformer model; {arch.name} is not one")
    if arch.is_transformer and arch.attention_heads % tp:
        raise InvalidWorkload(
            "tp", f"must divide the model's attention heads ({arch.attention_heads}), got {tp}"
        )
    if pp * vpp > max(arch.layers, 1):
        raise InvalidWorkload("pp", f"pp x vpp ({pp * vpp}) must not exceed the model's {arch.layers} layers")
    if vpp > 1 and pp < 2:
        raise InvalidWorkload("vpp", "interleaving needs at least 2 pipeline stages (pp >= 2)")


def _effective_seq_len(w: Workload, arch: ModelArch) -> int:
    if not arch.is_transformer:
        return 0
    if w.seq_len is None:
        return min(DEFAULT_SEQ_LEN, arch.max_seq_len)
    if w.seq_len > arch.max_seq_len:
        raise InvalidWorkload(
            "seq_len", f"exceeds {arch.name}'s maximum context of {arch.max_seq_len}, got {w.seq_len}"
        )
    return w.seq_len


def _check_efficiency(w: Workload) -> None:
    override = w.efficiency
    if override is None:
        return
    if override.mfu is None and override.bandwidth_utilization is None:
        raise InvalidWorkload(
            "efficiency", "give mfu (compute-bound work) or bandwidth_utilization (decoding)"
        )
    if w.kind in TRAINING_KINDS and override.bandwidth_utilization is not None:
        raise InvalidWorkload(
            "efficiency.bandwidth_utilization", f"applies to token generation, not to {w.kind}: give mfu"
        )
    if w.kind == "serving" and override.mfu is not None and override.bandwidth_utilization is None:
        raise InvalidWorkload(
            "efficiency.mfu", "serving throughput is token generation: give bandwidth_utilization"
        )


def resolve_workload(w: Workload) -> ResolvedWorkload:
    """Validate ``w`` beyond its types and fill in its defaults.

    Raises :class:`~solver.errors.InvalidWorkload` (or its subclass ``UnknownModel``) naming the field.
    Settings that do not apply are accepted and ignored: the optimizer, master weights, offload,
    gradient accumulation, sharding and recomputation of an inference workload, LoRA targets of full
    training, and sharding on a single data-parallel rank.
    """
    _check_positive(w)
    arch = _resolve_model(w.model)
    _check_method(w, arch)
    _check_training_options(w)
    _check_layout(w, arch)
    _check_efficiency(w)
    seq_len = _effective_seq_len(w, arch)
    if w.cp is not None and w.cp > 1 and seq_len % w.cp:
        raise InvalidWorkload("cp", f"must divide seq_len ({seq_len}), got {w.cp}")
    targets = resolve_lora_targets(w.lora_targets, arch) if arch.is_transformer else ()
    tp, pp, cp = w.tp or 1, w.pp or 1, w.cp or 1
    return ResolvedWorkload(
        kind=w.kind,
        arch=arch,
        precision=w.precision,
        method=w.method,
        lora_rank=w.lora_rank,
        optimizer=w.optimizer,
        sharding=w.sharding or "none",
        recompute=w.recompute or "none",
        recompute_auto=w.recompute is None,
        batch_size=w.micro_batch or w.batch_size or 1,
        attention=w.attention,
        master_weights=w.master_weights,
        optimizer_in_backward=w.optimizer_in_backward,
        offload=w.offload,
        lora_targets=targets if w.method != "full" else (),
        lora_dropout=w.lora_dropout,
        gradient_accumulation_steps=w.gradient_accumulation_steps,
        seq_len=seq_len,
        gpu_count=w.gpu_count,
        tp=tp,
        dp=w.gpu_count // (tp * pp * cp),
        stack=w.stack or DEFAULT_STACK[w.kind],
        efficiency=w.efficiency,
        kv_cache=w.kv_cache,
        pp=pp,
        vpp=w.vpp or 1,
        cp=cp,
        stated=frozenset(f for f in LAYOUT_FIELDS if getattr(w, f) is not None),
        global_batch=w.batch_size,
        global_batch_tokens=w.global_batch_tokens,
    )
