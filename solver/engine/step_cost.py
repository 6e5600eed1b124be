"""The time of one engine step from the roofline: what the step computes, what it reads, what it syncs.

A step of a continuous-batching engine runs one forward pass over every scheduled token: ``D``
decoding sequences (one token each, attending to their whole context) and prefill chunks (``P``
prompt tokens, each chunk attending to its prefix). On a replica of ``tp`` GPUs the step's kernels
fall in two kinds, each bound by its own roofline, one after the other (a layer's attention waits
for its QKV projection and feeds its output projection, so the two kinds do not overlap):

- **the linear layers** (QKV/output projections, MLP or experts, the output head): FLOPs = 2 × active
  non-embedding parameters × (P + D) + the output head for the ``D`` + chunk ends that sample;
  bytes = the weights the step touches — all of a dense model; of a mixture of experts the shared
  part plus the experts its tokens route to, ``1 − (1 − k/E)^T`` of them;
- **attention**: FLOPs = 4 × layers × query width × the tokens' attention context; bytes = the KV
  cache it reads and writes;

each taking ``max(FLOPs ÷ (tp × achievable matmul rate × compute_efficiency), bytes ÷ (tp ×
bandwidth × its bandwidth share))`` — ``bandwidth_efficiency`` for the weights, streamed whole, and
``kv_bandwidth_efficiency`` for the KV cache, read in small paged blocks per sequence. A roofline over the step's summed FLOPs and bytes instead
(``max(ΣFLOPs, Σbytes)``) lets a large batch's KV reads hide under its weight GEMMs' compute, which
no kernel schedule does: the attention of a step of many long sequences is memory-bound while its
GEMMs are compute-bound, and the two add up. Then

- **sync** = two all-reduces per layer of the step's activations over the tensor-parallel group
  (ring: ``2(tp − 1)/tp`` × bytes ÷ bus bandwidth + latency);

and the step takes ``step_overhead + sequence_overhead × sequences + linear + attention + sync``.
:meth:`StepCost.terms` gives those parts of one step apart (``make accuracy`` breaks the held-out
rows' predictions into them).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from solver.catalog.models import ModelArch, active_params
from solver.engine.profiles import EngineProfile

__all__ = ["StepCost", "StepShape"]


class StepShape(NamedTuple):
    """What one step processes: ``decodes`` sequences whose contexts sum to ``decode_context`` tokens;
    ``prefill_tokens`` prompt tokens in ``prefill_chunks`` chunks, whose attention spans sum to
    ``prefill_attention`` and whose prefixes (read from the cache) sum to ``prefill_prefix`` tokens;
    ``prompts_done`` chunks end a prompt (and sample its first token)."""

    decodes: int
    decode_context: float
    prefill_tokens: int = 0
    prefill_attention: float = 0.0
    prefill_prefix: float = 0.0
    prefill_chunks: int = 0
    prompts_done: int = 0


class StepCost:
    """Seconds per step of one replica (module docstring); built once per replica configuration."""

    def __init__(
        self,
        arch: ModelArch,
        profile: EngineProfile,
        *,
        tp: int,
        matmul_flops_per_s: float,
        bandwidth_bytes_per_s: float,
        weight_bytes_per_param: float,
        kv_bytes_per_element: float,
        bus_bytes_per_s: float,
        bus_latency_s: float,
        attention_flops_per_s: float | None = None,
    ) -> None:
        self.profile, self.tp = profile, tp
        embedding = float(arch.embedding_params)
        active = active_params(arch) * 1e9
        self.flops_per_token = 2.0 * max(active - embedding, 0.0)
        self.head_flops = 2.0 * arch.hidden_size * arch.vocab_size
        self.attention_flops = 4.0 * arch.layers * arch.attention_heads * arch.effective_head_dim
        self.compute_rate = tp * matmul_flops_per_s * profile.compute_efficiency
        attention_rate = matmul_flops_per_s if attention_flops_per_s is None else attention_flops_per_s
        self.attention_rate = tp * attention_rate * profile.compute_efficiency
        self.bandwidth = tp * bandwidth_bytes_per_s * profile.bandwidth_efficiency
        kv_share = profile.kv_bandwidth_efficiency or profile.bandwidth_efficiency
        self.kv_bandwidth = tp * bandwidth_bytes_per_s * kv_share
        self._weights(arch, weight_bytes_per_param)
        kv_shards = min(tp, max(arch.kv_heads, 1)) if arch.kv_cache_width is None else 1
        self.kv_bytes_per_token = arch.layers * arch.kv_elements_per_token_layer * kv_bytes_per_element
        self.kv_read_scale = tp / kv_shards  # KV heads fewer than tp are replicated on the GPUs
        self.sync_bytes_per_token = 2.0 * arch.layers * arch.hidden_size * 2.0 * 2.0 * (tp - 1) / tp
        self.bus, self.sync_latency = bus_bytes_per_s, 2.0 * arch.layers * bus_latency_s if tp > 1 else 0.0

    def _weights(self, arch: ModelArch, bytes_per_param: float) -> None:
        total = arch.params_b * 1e9
        active = active_params(arch) * 1e9
        share = arch.active_experts / arch.experts if arch.experts > 1 else 1.0
        experts = (total - active) / (1.0 - share) if share < 1.0 else 0.0
        self.dense_bytes = (total - experts) * bytes_per_param
        self.expert_bytes = experts * bytes_per_param
        self.expert_share = share

    def weights_read(self, tokens: int) -> float:
        """Bytes of weights a step of ``tokens`` tokens reads (all replicas' GPUs together)."""
        if self.expert_bytes <= 0:
            return self.dense_bytes
        touched = 1.0 - math.pow(1.0 - self.expert_share, max(tokens, 1))
        return self.dense_bytes + self.expert_bytes * touched

    def decode_seconds(self, decodes: int, contexts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Seconds of pure decode steps of ``decodes`` sequences at each summed context in ``contexts``
        (what :meth:`seconds` gives each, computed together)."""
        linear = max((self.flops_per_token + self.head_flops) * decodes / self.compute_rate,
                     self.weights_read(decodes) / self.bandwidth)  # fmt: skip
        kv_bytes = self.kv_bytes_per_token * (self.kv_read_scale * contexts + decodes)
        attention = np.maximum(
            self.attention_flops * contexts / self.attention_rate, kv_bytes / self.kv_bandwidth
        )
        sync = self.sync_bytes_per_token * decodes / self.bus + self.sync_latency if self.tp > 1 else 0.0
        overhead = self.profile.step_overhead_s + self.profile.sequence_overhead_s * decodes
        result: npt.NDArray[np.float64] = overhead + linear + attention + sync
        return result

    def terms(self, shape: StepShape) -> dict[str, float]:
        """Seconds of each part of one step of ``shape``: the linear layers' weight reads and
        compute, attention's KV reads and compute (the larger of each pair counts), the all-reduces,
        and the engine's fixed and per-sequence overheads."""
        tokens = shape.decodes + shape.prefill_tokens
        if tokens <= 0:
            return dict.fromkeys(("weights", "linear_compute", "kv", "attention_compute", "sync",
                                  "step_overhead", "sequence_overhead"), 0.0)  # fmt: skip
        sampled = shape.decodes + shape.prompts_done
        kv_read = self.kv_bytes_per_token * self.kv_read_scale * (shape.decode_context + shape.prefill_prefix)
        attention = shape.decode_context + shape.prefill_attention
        sync = self.sync_bytes_per_token * tokens / self.bus + self.sync_latency if self.tp > 1 else 0.0
        return {
            "weights": self.weights_read(tokens) / self.bandwidth,
            "linear_compute": (self.flops_per_token * tokens + self.head_flops * sampled) / self.compute_rate,
            "kv": (kv_read + self.kv_bytes_per_token * tokens) / self.kv_bandwidth,
            "attention_compute": self.attention_flops * attention / self.attention_rate,
            "sync": sync,
            "step_overhead": self.profile.step_overhead_s,
            "sequence_overhead": self.profile.sequence_overhead_s * (shape.decodes + shape.prefill_chunks),
        }

    def seconds(self, shape: StepShape) -> float:
        """Seconds one step of ``shape`` takes."""
        if shape.decodes + shape.prefill_tokens <= 0:
            return 0.0
        t = self.terms(shape)
        return (t["step_overhead"] + t["sequence_overhead"] + max(t["weights"], t["linear_compute"])
                + max(t["kv"], t["attention_compute"]) + t["sync"])  # fmt: skip
