"""``POST /v1/throughput`` for serving at a load: the engine model (``solver.serve_at_load``) answers.

A serving request that states ``input_tokens`` (with ``output_tokens``) or a ``request_mix`` is
simulated: each request's context is its prompt plus its output, checked against the model's
maximum context (``seq_len`` plays no part); the load defaults to ``offline``. The answer's ``value``
is output tokens per second over all replicas, ``serving`` holds the rest (requests/s, TTFT, TPOT and
end-to-end percentiles, whether a request rate is sustained, the engine's limits), and ``band`` is the
engine model's spread on the shipped measurements it was fitted on (:data:`ENGINE_BAND`).
"""

from __future__ import annotations

from typing import Final

import msgspec

from service.db.snapshot import CatalogSnapshot
from service.estimates.schemas import ServingAtLoad, ThroughputRequest, ThroughputResponse
from solver import (
    Band,
    EfficiencyUsed,
    GpuSpec,
    Interconnect,
    InvalidWorkload,
    ModelArch,
    Network,
    ServedLoad,
    ServingLoad,
    ServingSetup,
    ThroughputUnavailable,
    decoder_refusal,
    engine_profile,
    precision_refusal,
    resolve_workload,
    serve_at_load,
    validate_mix,
)

__all__ = ["ENGINE_BAND", "is_engine_request", "serving_at_load"]

ENGINE_BAND: Final = (0.76, 1.31)
"""The 10th and 90th percentiles of measured ÷ predicted on the held-out TensorRT-LLM rows
(``statistics.quantiles``; ``tests/solver/engine/test_accuracy.py`` checks them against the profiles)."""
_OFFLINE: Final = ServingLoad(offline=True)


def is_engine_request(request: ThroughputRequest) -> bool:
    """Whether ``request`` asks for serving at a load (module docstring)."""
    return request.kind == "serving" and (request.input_tokens is not None or request.request_mix is not None)


def _classes(request: ThroughputRequest, arch: ModelArch) -> list[tuple[int, int, float]]:
    """The request sizes and shares, each within the model's context (a 400 naming the field)."""
    refused = decoder_refusal(arch)
    if refused is not None:
        raise InvalidWorkload("model", refused)
    if request.request_mix is not None:
        if request.input_tokens is not None or request.output_tokens is not None:
            raise InvalidWorkload("request_mix", "give input_tokens/output_tokens or request_mix, not both")
        validate_mix(request.request_mix)
        sized = [(c.input_tokens, c.output_tokens, c.share, f"request_mix[{i}].output_tokens")
                 for i, c in enumerate(request.request_mix)]  # fmt: skip
    elif request.output_tokens is None:
        raise InvalidWorkload("output_tokens", "is required with input_tokens (tokens generated per request)")
    else:
        assert request.input_tokens is not None  # is_engine_request
        sized = [(request.input_tokens, request.output_tokens, 1.0, "output_tokens")]
    for prompt, output, _, field in sized:
        if prompt + output > arch.max_seq_len:
            raise InvalidWorkload(
                field,
                f"input + output is {prompt + output:,} tokens, beyond {arch.name}'s context of {arch.max_seq_len:,}",
            )
    return [(prompt, output, share) for prompt, output, share, _ in sized]


def _setup(
    snapshot: CatalogSnapshot, request: ThroughputRequest, gpu: GpuSpec, interconnect: Interconnect
) -> ServingSetup:
    resolved = resolve_workload(msgspec.structs.replace(request, seq_len=None, kind="serving"))
    refused = precision_refusal(gpu, resolved.precision, training=False)
    if refused is not None:
        raise ThroughputUnavailable(refused)
    hardware = snapshot.profile_index().hardware(gpu.gpu_id)
    return ServingSetup(arch=resolved.arch, gpu=gpu, hardware=hardware, precision=resolved.precision,
                        kv_cache=request.kv_cache, engine=request.engine, interconnect=interconnect)  # fmt: skip


def _method(served: ServedLoad, setup: ServingSetup, load: ServingLoad) -> str:
    name, value = load.mode()
    at = "offline (every request queued at once)" if name == "offline" else f"{name} {value:g}"
    return (
        f"engine model ({setup.engine}): {served.replicas} replica(s) of tp {served.tp} simulated at {at}, "
        f"continuous batching with chunked prefill (token budget {served.replica.token_budget}, up to "
        f"{served.replica.max_seqs} sequences, KV cache {served.replica.kv_capacity_tokens:,} tokens); step "
        "times from the roofline (weights and KV read at the fitted bandwidth share, FLOPs at the fitted "
        "compute share, tensor-parallel all-reduces) plus fitted step, sequence and request overheads; "
        f"{engine_profile(setup.engine).source}"
    )


def serving_at_load(
    snapshot: CatalogSnapshot, request: ThroughputRequest, gpu: GpuSpec, interconnect: Interconnect,
    network: Network, gpus_per_instance: int,
) -> ThroughputResponse:  # fmt: skip
    """The engine model's answer to ``request`` on ``gpu`` (module docstring)."""
    setup = _setup(snapshot, request, gpu, interconnect)
    classes = _classes(request, setup.arch)
    load = request.load or _OFFLINE
    load.mode()  # exactly one kind of load (a 400 naming ``load``)
    try:
        served = serve_at_load(setup, classes, load, gpu_count=request.gpu_count, tp=request.tp,
                               gpus_per_instance=gpus_per_instance)  # fmt: skip
    except ValueError as exc:
        raise ThroughputUnavailable(str(exc)) from exc
    result = served.result
    value = result.output_tokens_per_s
    return ThroughputResponse(
        value=value,
        unit="output_tokens_per_s",
        provenance="derived",
        route="engine",
        workload_class="serving",
        stack=setup.engine,
        efficiency=EfficiencyUsed(basis="calibrated"),
        band=Band(low=value * ENGINE_BAND[0], high=value * ENGINE_BAND[1]),
        scaling=None,
        sources=[],
        confidence="medium",
        confidence_score=0.5,
        method=_method(served, setup, load),
        model=setup.arch.name,
        gpu=gpu.gpu_id,
        gpu_count=request.gpu_count,
        interconnect=interconnect,
        interconnect_derived=request.interconnect is None,
        gpus_per_instance=gpus_per_instance,
        network=network,
        serving=ServingAtLoad(
            engine=setup.engine,
            load=load,
            tp=served.tp,
            replicas=served.replicas,
            output_tokens_per_s=value,
            total_tokens_per_s=result.total_tokens_per_s,
            requests_per_s=result.requests_per_s,
            ttft_ms=result.ttft_ms,
            tpot_ms=result.tpot_ms,
            e2e_ms=result.e2e_ms,
            stable=result.stable,
            kv_cache_tokens=served.replica.kv_capacity_tokens,
            max_batch=served.replica.max_seqs,
            token_budget=served.replica.token_budget,
            requests_simulated=result.requests_simulated,
        ),
    )
