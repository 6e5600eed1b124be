"""Which parallel layouts each training software stack runs: the layout search offers only these.

A stack is named by the workload's ``stack`` (``solver.spec.workload.Stack``). Each row says which
kinds of model parallelism the stack's training loop provides and which data-parallel shardings, with
where that is documented:

- **optimized** (Megatron-Core / NeMo / torchtitan): tensor, pipeline (interleaved) and context
  parallelism, and data parallelism with the distributed optimizer (ZeRO-1) or FSDP (ZeRO-2/3)
  (Megatron-Core ``parallelisms`` guide; torchtitan ``docs/composability``: FSDP2 × TP × PP × CP).
- **standard** (Transformers ``Trainer`` + PEFT + Accelerate, the fine-tuning default): data parallelism
  only — DDP, or DeepSpeed ZeRO-1/2/3 and FSDP through Accelerate. PEFT documents LoRA and QLoRA
  (bitsandbytes 4-bit) with DeepSpeed ZeRO stages 1–3 and with FSDP (PEFT docs ``accelerate/deepspeed``
  and ``accelerate/fsdp``; QLoRA with ZeRO-3/FSDP since PEFT 0.10.0, Answer.AI's FSDP-QLoRA). It has no
  tensor- or pipeline-parallel training path for PEFT or bitsandbytes models (``device_map="auto"``
  places layers on GPUs one after another: one GPU works at a time, which is not a pipeline), and no
  context parallelism. So a QLoRA of a 70B runs on one large GPU or sharded (FSDP-QLoRA), never at
  tensor parallel 2.

Inference is not limited here: serving engines (vLLM, SGLang, TensorRT-LLM) shard by tensor
parallelism whatever the training stack.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["STACK_PARALLELISM", "StackParallelism", "stack_parallelism"]


class StackParallelism(NamedTuple):
    """The model parallelism a stack's training loop provides (data parallelism always)."""

    tensor: bool
    pipeline: bool
    context: bool
    source: str


STACK_PARALLELISM: Final[dict[str, StackParallelism]] = {
    "optimized": StackParallelism(
        tensor=True,
        pipeline=True,
        context=True,
        source="Megatron-Core parallelism guide; torchtitan composability (FSDP2 x TP x PP x CP)",
    ),
    "standard": StackParallelism(
        tensor=False,
        pipeline=False,
        context=False,
        source=(
            "Transformers Trainer + PEFT + Accelerate: DDP, DeepSpeed ZeRO-1/2/3 or FSDP only "
            "(PEFT docs accelerate/deepspeed and accelerate/fsdp; QLoRA with ZeRO-3/FSDP since PEFT 0.10)"
        ),
    ),
}
"""Per stack name: the kinds of model parallelism its training loop provides (module docstring)."""


def stack_parallelism(stack: str) -> StackParallelism:
    """The row of ``stack`` (an unknown name gets the standard stack's: data parallelism only)."""
    return STACK_PARALLELISM.get(stack, STACK_PARALLELISM["standard"])
