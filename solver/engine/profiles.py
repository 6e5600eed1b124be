"""What each serving engine's scheduler allows and what its steps cost beyond the roofline.

Scheduler limits are the engines' documented defaults:

- **vllm** (V1, the OpenAI-compatible server): ``max_num_batched_tokens`` 8,192 and ``max_num_seqs``
  1,024 on GPUs with at least 70 GiB that are not A100s, else 2,048 and 256
  (``vllm/engine/arg_utils.py``, ``EngineArgs.get_batch_defaults``; the A100 exception cites vLLM PR
  #17885); ``gpu_memory_utilization`` 0.9; 16-token KV blocks; chunked prefill always on in V1.
- **sglang**: its own documented scheduler limits — a step's token budget is its
  ``chunked_prefill_size``, set by GPU memory (``python/sglang/srt/server_args.py``,
  ``_handle_gpu_memory_settings``: 2,048 tokens under 35 GiB (T4, A10, L4, RTX 4090), 4,096 under
  60 GiB (A100 40 GB, L40S), 8,192 under 160 GiB (A100 80 GB, H100, H200), 16,384 above (B200,
  MI300X)), and its running requests are bounded by the KV pool with a floor of 2,048
  (``model_runner.init_memory_pool``: ``min(max(pool tokens / context × 512, 2048), 4096)``), not
  vLLM's 256 or 1,024 — but no source this project ships measures its costs apart from vLLM's (the
  issue's independent check does, and may not be used for calibration), so its efficiencies and
  overheads are vLLM's.
- **tgi**: modelled as vLLM throughout (no shipped source measures it). Their answers say so
  (``source``).
- **trtllm** (``trtllm-bench`` in-flight batching): ``max_num_tokens`` 8,192 and a batch of up to 2,048
  sequences (the TensorRT-LLM performance overview's max-throughput runs), KV cache at 0.9 of free
  memory, and its default capacity policy ``GUARANTEED_NO_EVICT``: a request is admitted only with KV
  room for its whole output, so nothing is preempted (vLLM admits on the prompt and preempts).

The efficiencies and overheads are fitted, not documented: ``compute_efficiency`` (the share of the
GPU's achievable matmul rate a step's prefill and decode FLOPs reach), ``bandwidth_efficiency`` (the
share of its memory bandwidth the weights' reads reach), ``kv_bandwidth_efficiency`` (the share the
KV cache's paged reads reach), ``step_overhead_s`` (scheduling, sampling, kernel launches per step),
``sequence_overhead_s`` (per running sequence per step: sampling, output processing) and
``request_overhead_s`` (the front end's serial work per request: HTTP, tokenising, detokenising,
scheduling it). ``python -m tests.solver.engine.engine_fit`` fits them:

- the GPU-side six on the even half of the shipped TensorRT-LLM offline rows (least squares on log
  error within plausible bounds; the step overhead sits at its 2 ms bound, a prior: the offline rows
  cannot tell it from the bandwidth shares, ``engine_fit.BOUNDS``): compute 0.819, weights' bandwidth
  0.621, KV bandwidth 0.591, 2 ms a step, 8 µs a sequence, and fp4 matmuls at 0.608 of that compute
  share (``fp4_compute_efficiency``: NVFP4 GEMMs about 1.2x fp8's speed, not the peak's 2x; without
  it one share served both, and the fp4 Blackwell rows came out x1.14 while the fp8 Hopper rows came
  out x0.87). The odd half, held out, scores a median error of 13.8 %, p90 35.2 %, 98 % within 2x
  with these values (n = 129; 16.2 % and 37.5 % before the fp4 share, ``make accuracy``). Attention runs at the fp8 rate under fp4 weights
  (no fused attention kernel has an fp4 path). ``trtllm`` takes them as they are (``trtllm-bench`` has
  no HTTP front end: no request overhead).
- vLLM's front end and prefill on Mélange's short-output rows (its vLLM runs with at most 25 output
  tokens, where decoding costs little): ``request_overhead_s`` 26.3 ms and ``compute_efficiency``
  0.303. The front end is why short requests top out near 38 requests/s on one replica however fast
  the GPU (Mélange measures 41-47 on H100 and A100 at 12 tokens in and out); the 2 ms front end
  assumed before predicted about ten times that on H100. Prefill in vLLM reaches about 0.37 of the share
  of TensorRT-LLM's. Decoding keeps TensorRT-LLM's step costs: Mélange's vLLM (early 2024) spent
  about 0.44 ms of CPU per running sequence every step (fitted on its even rows, its odd rows then
  within 11 % median, ``tests/solver/engine/test_accuracy.py``), the cost that vLLM's later releases
  took off the step (separate API-server and engine processes, asynchronous output processing, the V1
  engine's persistent batch); carried into this profile it would cap any replica near 2,300 output
  tokens/s however fast the GPU.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

__all__ = ["ENGINES", "ENGINE_PROFILES", "Engine", "EngineProfile", "engine_profile"]

Engine = Literal["vllm", "sglang", "trtllm", "tgi"]
ENGINES: Final[tuple[Engine, ...]] = ("vllm", "sglang", "trtllm", "tgi")
_LARGE_GIB: Final = 70.0


class EngineProfile(NamedTuple):
    """One engine's scheduler limits and fitted step costs (module docstring)."""

    name: str
    token_budget_large: int
    token_budget_small: int
    max_seqs_large: int
    max_seqs_small: int
    memory_fraction: float
    block_tokens: int
    compute_efficiency: float
    bandwidth_efficiency: float
    step_overhead_s: float
    sequence_overhead_s: float
    request_overhead_s: float
    source: str
    reserve_output: bool = False
    kv_bandwidth_efficiency: float | None = None
    """The share of the bandwidth attention's KV-cache reads reach (paged, per-sequence reads of many
    short blocks), where it differs from the weights' (``None``: ``bandwidth_efficiency``)."""
    fp4_compute_efficiency: float = 1.0
    """The share of the fp4 tensor-core rate (NVFP4, MXFP4) a step's fp4 matmuls reach, relative to
    ``compute_efficiency`` (fitted: block-scaled 4-bit GEMMs in serving shapes — grouped expert GEMMs,
    a step's few hundred tokens — gain far less over fp8 than the peak's 2x)."""
    budget_tiers: tuple[tuple[float, int], ...] = ()
    """``(GiB, tokens)`` in rising order: a GPU with less memory than the first tier's GiB gets its
    token budget (SGLang's ``chunked_prefill_size`` by memory); empty: vLLM's large-GPU rule."""

    def token_budget(self, memory_gib: float, gpu_name: str) -> int:
        """Tokens one step may process on a GPU of ``memory_gib`` (the engine's tiers, or vLLM's
        large-GPU rule)."""
        for below, tokens in self.budget_tiers:
            if memory_gib < below:
                return tokens
        return self.token_budget_large if _large(memory_gib, gpu_name) else self.token_budget_small

    def max_seqs(self, memory_gib: float, gpu_name: str) -> int:
        """Sequences one replica batches at most."""
        return self.max_seqs_large if _large(memory_gib, gpu_name) else self.max_seqs_small


def _large(memory_gib: float, gpu_name: str) -> bool:
    return memory_gib >= _LARGE_GIB and "a100" not in gpu_name.casefold()


_VLLM: Final = EngineProfile(
    name="vllm",
    token_budget_large=8192,
    token_budget_small=2048,
    max_seqs_large=1024,
    max_seqs_small=256,
    memory_fraction=0.9,
    block_tokens=16,
    compute_efficiency=0.303,
    bandwidth_efficiency=0.621,
    step_overhead_s=2.0e-3,
    sequence_overhead_s=8e-6,
    request_overhead_s=26.3e-3,
    source="vLLM V1 defaults (EngineArgs.get_batch_defaults); front end and prefill fitted on Mélange's "
    "vLLM rows, the rest on TensorRT-LLM's",
    kv_bandwidth_efficiency=0.591,
    fp4_compute_efficiency=0.608,
)

ENGINE_PROFILES: Final[dict[Engine, EngineProfile]] = {
    "vllm": _VLLM,
    "sglang": _VLLM._replace(
        name="sglang",
        token_budget_large=16384,
        token_budget_small=16384,
        max_seqs_large=2048,
        max_seqs_small=2048,
        budget_tiers=((35.0, 2048), (60.0, 4096), (160.0, 8192)),
        source="SGLang defaults (server_args.py, chunked_prefill_size by GPU memory; max_running_requests "
        f"at least 2,048); costs as vllm (no source measures sglang apart): {_VLLM.source}",
    ),
    "tgi": _VLLM._replace(name="tgi", source=f"as vllm (no source measures tgi apart): {_VLLM.source}"),
    "trtllm": EngineProfile(
        name="trtllm",
        token_budget_large=8192,
        token_budget_small=8192,
        max_seqs_large=2048,
        max_seqs_small=2048,
        memory_fraction=0.9,
        block_tokens=32,
        compute_efficiency=0.819,
        bandwidth_efficiency=0.621,
        step_overhead_s=2.0e-3,
        sequence_overhead_s=8e-6,
        request_overhead_s=0.0,
        source="trtllm-bench max-throughput settings (TensorRT-LLM perf overview); efficiencies fitted",
        reserve_output=True,
        kv_bandwidth_efficiency=0.591,
        fp4_compute_efficiency=0.608,
    ),
}
"""Per engine: its scheduler limits and fitted costs."""


def engine_profile(engine: Engine) -> EngineProfile:
    """The profile of ``engine``."""
    return ENGINE_PROFILES[engine]
