"""Activation, logits and inference-workspace bytes of one GPU.

Training activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", §4.1): per layer ``s·b·h·34 + 5·a·s²·b`` bytes with 16-bit activations, of which
``s·b·h·18`` are the attention block's and layer norms' inputs, Q/K/V, the projection input and the
dropout masks, ``s·b·h·16`` the two 4h-wide MLP tensors (generalised here to the model's MLP width:
four i-wide bytes per token for a plain MLP, eight for a gated one, whose gate, up, activation and
product tensors are all saved) and ``5·a·s²·b`` the attention scores, softmax and dropout that only an
eager attention kernel keeps. FlashAttention/SDPA (Dao et al. 2022) recompute the scores in backward
and store only the output and a per-row log-sum-exp, so under ``attention: flash`` the s² term is gone
whatever ``recompute`` says. fp32 training doubles every tensor. Full mixed-precision training under
autocast (fp32 parameters: HF Trainer, Fabric ``16-mixed``) keeps the residual stream in fp32, so both
norms save 4-byte inputs (+4·s·b·h) and an eager softmax is saved in fp32 (7·a·s²·b instead of 5).

Activation checkpointing (``recompute``):

* ``full`` keeps each layer's input (``2·s·b·h`` bytes) and recomputes one layer at a time in backward
  (Chen et al. 2016; Korthikanti's ``2·s·b·h·L``), so one layer's activations come back transiently;
* ``selective`` is PyTorch's selective activation checkpointing as the torch.utils.checkpoint
  ``create_selective_checkpoint_contexts`` policy of the PyTorch SAC blog/torchtitan applies it: the
  layer input, the attention output and every other matmul output are saved, element-wise work and the
  remaining matmuls are recomputed (under eager attention the scores are recomputed too).

Logits: the loss upcasts the ``b·s·V`` logits to fp32; at the start of backward the fp32 log-softmax
saved for backward, the incoming gradient and the log-softmax gradient coexist: 12 bytes per logit
(6 with a chunked/fused loss, 18 when the model output keeps 16-bit and fp32 copies alive, the band).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from solver.spec.workload import ResolvedWorkload

__all__ = [
    "LOGIT_BYTES",
    "ActivationParts",
    "activation_parts",
    "inference_workspace_bytes",
    "layer_activation_bytes",
    "logits_bytes",
    "saved_activation_bytes",
]

LOGIT_BYTES: Final[dict[str, float]] = {"low": 6.0, "point": 12.0, "high": 18.0}
_EAGER_SCORE_BYTES: Final = 5.0  # softmax output (2) + dropout mask (1) + dropout output (2), 16-bit
_AUTOCAST_SCORE_BYTES: Final = (
    7.0  # autocast runs softmax in fp32: fp32 output (4) + mask (1) + 16-bit copy (2)
)
_AUTOCAST_RESIDUAL_BYTES: Final = 4.0  # fp32 residual stream: both norms save 4-byte inputs, not 2
_INFERENCE_SCORE_BYTES: Final = 6.0  # one layer's fp32 scores + 16-bit softmax during an eager prefill


def _note(notes: list[str] | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


def _element_scale(rw: ResolvedWorkload) -> float:
    """Korthikanti's byte counts assume 16-bit activations; fp32 training doubles them."""
    return 2.0 if rw.precision == "fp32" else 1.0


def _autocast(rw: ResolvedWorkload) -> bool:
    """Full mixed-precision training computes under autocast with fp32 parameters (HF Trainer, Fabric
    ``16-mixed``): the residual stream stays fp32 and softmax/layer norm run in fp32."""
    return (
        not rw.is_inference
        and rw.method == "full"
        and rw.master_weights == "fp32"
        and rw.precision in ("bf16", "fp16")
    )


def _adapter_bytes_per_token(rw: ResolvedWorkload) -> float:
    """How LoRA changes one layer's saved bytes per token relative to full training.

    A frozen linear layer does not save its input (autograd keeps a matmul input only to compute the
    weight's gradient), so the inputs of projections without an adapter are not kept: the QKV input, the
    attention-output input, the MLP input and the down-projection input, each when none of its consumers
    is adapted. bitsandbytes 4-bit layers (QLoRA) save their input whenever it needs a gradient, so QLoRA
    saves them all. With ``lora_dropout`` > 0 every adapter saves its dropped-out input (2 B) and the
    dropout mask (1 B) per input element.
    """
    if rw.is_inference or rw.method == "full":
        return 0.0
    arch = rw.arch
    h = arch.hidden_size
    q_width = arch.attention_heads * arch.effective_head_dim
    width = arch.intermediate_size * arch.active_experts
    targets = set(rw.lora_targets)
    delta = 0.0
    if rw.method == "lora":
        if not targets & {"q_proj", "k_proj", "v_proj"}:
            delta -= 2.0 * h
        if "o_proj" not in targets:
            delta -= 2.0 * q_width
        if not targets & {"gate_proj", "up_proj"}:
            delta -= 2.0 * h
        if "down_proj" not in targets:
            delta -= 2.0 * width
    if rw.lora_dropout > 0:
        inputs = {"o_proj": q_width, "down_proj": width}
        delta += 3.0 * sum(inputs.get(module, h) for module in targets)
    return delta


def layer_activation_bytes(rw: ResolvedWorkload, eager_scores: bool) -> float:
    """Bytes one transformer layer saves for backward with nothing recomputed."""
    arch = rw.arch
    s, b, h = rw.seq_len, rw.batch_size, arch.hidden_size
    width = arch.intermediate_size * arch.active_experts
    autocast = _autocast(rw)
    per_layer = s * b * h * (18.0 + (_AUTOCAST_RESIDUAL_BYTES if autocast else 0.0))
    per_layer += s * b * width * (8.0 if arch.gated_mlp else 4.0)
    per_layer += s * b * _adapter_bytes_per_token(rw)
    if eager_scores:
        score_bytes = _AUTOCAST_SCORE_BYTES if autocast else _EAGER_SCORE_BYTES
        per_layer += score_bytes * arch.attention_heads * s * s * b
    return per_layer * _element_scale(rw)


def _selective_layer_bytes(rw: ResolvedWorkload) -> float:
    """Bytes one layer keeps under selective checkpointing: input, attention output, half the matmuls."""
    arch = rw.arch
    s, b, h = rw.seq_len, rw.batch_size, arch.hidden_size
    q_width = arch.attention_heads * arch.effective_head_dim
    kv_width = arch.kv_heads * arch.effective_head_dim
    width = arch.intermediate_size * arch.active_experts
    matmul_outputs = q_width + 2 * kv_width + h + (2 * width if arch.gated_mlp else width) + h
    return s * b * 2.0 * (h + q_width + matmul_outputs / 2.0) * _element_scale(rw)


class ActivationParts(NamedTuple):
    """One micro-batch's saved activations (bytes, before tensor or context parallelism): kept per
    layer, a transient recomputed layer (checkpointing), and the tensors outside the layers
    (embedding output and final norm input, half each)."""

    per_layer: float
    transient: float
    outside: float


def activation_parts(rw: ResolvedWorkload, notes: list[str] | None = None) -> ActivationParts:
    """:class:`ActivationParts` of ``rw`` (a model without layers keeps everything ``outside``)."""
    arch = rw.arch
    if not arch.is_transformer:
        _note(
            notes,
            f"{arch.name}: {arch.saved_activations_per_sample or 0:.3g} saved activation elements per "
            f"{arch.reference_input} sample",
        )
        saved = (arch.saved_activations_per_sample or 0.0) * rw.batch_size * 2.0 * _element_scale(rw)
        return ActivationParts(0.0, 0.0, saved)
    eager = rw.attention == "eager"
    s, b, h = rw.seq_len, rw.batch_size, arch.hidden_size
    outside = 2.0 * s * b * h * 2.0 * _element_scale(rw)  # embedding output and final norm input
    one_layer = layer_activation_bytes(rw, eager_scores=eager)
    scores = " + 5·a·s²·b eager attention scores" if eager else " (flash attention: no s² scores)"
    if rw.recompute == "full":
        _note(
            notes,
            "full activation checkpointing: 2·s·b·h bytes per layer input + one layer recomputed in "
            f"backward (s·b·(18h + MLP tensors){scores})",
        )
        return ActivationParts(s * b * h * 2.0 * _element_scale(rw), one_layer, outside)
    if rw.recompute == "selective":
        _note(
            notes,
            "selective activation checkpointing: per layer the input, attention output and every other "
            "matmul output are kept, one layer's full activations recomputed in backward",
        )
        return ActivationParts(_selective_layer_bytes(rw), one_layer, outside)
    _note(notes, f"activations per layer s·b·h·18 + MLP i-wide tensors{scores} (Korthikanti et al.)")
    return ActivationParts(one_layer, 0.0, outside)


def saved_activation_bytes(rw: ResolvedWorkload, notes: list[str] | None = None) -> float:
    """Activation bytes live at the turn from forward to backward, over all layers (before tp)."""
    parts = activation_parts(rw, notes)
    return rw.arch.layers * parts.per_layer + parts.transient + parts.outside


def logits_bytes(rw: ResolvedWorkload, end: str) -> float:
    """Vocabulary logits and loss tensors of a training step at one end of the band (0 for encoders)."""
    if rw.arch.family == "encoder" or not rw.arch.is_transformer:
        return 0.0
    return rw.batch_size * rw.seq_len * rw.arch.vocab_size * LOGIT_BYTES[end]


def inference_workspace_bytes(rw: ResolvedWorkload) -> tuple[float, float]:
    """(activations, logits) of a forward-only pass: one layer's prefill workspace, last-token logits."""
    arch = rw.arch
    act_bytes = 4.0 if rw.precision == "fp32" else 2.0
    if not arch.is_transformer:
        return (arch.saved_activations_per_sample or 0.0) * rw.batch_size * act_bytes / 8.0, 0.0
    s, b = rw.seq_len, rw.batch_size
    width = arch.intermediate_size * arch.active_experts
    workspace = s * b * (4.0 * arch.hidden_size + 2.0 * width) * act_bytes
    if rw.attention == "eager":
        workspace += _INFERENCE_SCORE_BYTES * arch.attention_heads * s * s * b
    return workspace, b * arch.vocab_size * 4.0
