"""The per-GPU roofline's work terms: what the kernels of one training token run."""

from __future__ import annotations

import pytest

from solver.catalog.models import lookup_model
from solver.throughput.efficiency import ATTENTION_BACKWARD_PASSES, forward_terms, training_terms


def test_a_fused_attention_backward_recomputes_the_score_matrix() -> None:
    """FlashAttention's backward runs five T×T×d matmuls against the forward's two (Shah et al. 2024,
    §4.1): 3.5 forward passes of attention per training token, against 3 of the linear layers."""
    arch = lookup_model("Llama 3 8B")
    forward = forward_terms(arch, 8192)
    full = training_terms(arch, 8192, "full", "none")
    assert ATTENTION_BACKWARD_PASSES == 2.5
    assert full.linear_flops == pytest.approx(3 * forward.linear_flops)
    assert full.attention_flops == pytest.approx(3.5 * forward.attention_flops)
    recomputed = training_terms(arch, 8192, "full", "full")
    assert recomputed.attention_flops == pytest.approx(4.5 * forward.attention_flops)


def test_a_lora_backward_runs_the_whole_attention_backward() -> None:
    """The attention core has no weights, so freezing the base saves none of its backward."""
    arch = lookup_model("Llama 3 8B")
    forward = forward_terms(arch, 4096)
    lora = training_terms(arch, 4096, "lora", "none")
    assert lora.linear_flops == pytest.approx(2 * forward.linear_flops)
    assert lora.attention_flops == pytest.approx(3.5 * forward.attention_flops)


def test_model_flops_keep_the_three_pass_convention() -> None:
    """MFU's numerator (``kernel=False``) counts attention as the linear layers are: 3 passes, 2 for
    LoRA, no recomputation; only the time model pays the fused kernel's recompute."""
    arch = lookup_model("Llama 3 8B")
    forward = forward_terms(arch, 8192)
    model = training_terms(arch, 8192, "full", "none", kernel=False)
    assert model.attention_flops == pytest.approx(3 * forward.attention_flops)
    lora = training_terms(arch, 8192, "lora", "none", kernel=False)
    assert lora.attention_flops == pytest.approx(2 * forward.attention_flops)
