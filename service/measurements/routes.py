"""``POST /v1/measurements`` (admin) and ``GET /v1/measurements``: imported benchmark results."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import anyio.to_thread
from litestar import Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import QueryParameter, RawBody

from pricing import MeasurementFormat, UploadFacts
from service.db.store import Store
from service.http import MAX_UPLOAD_BYTES, Limit, Offset, ReadableResponse, require_admin
from service.measurements.importer import import_measurements
from service.measurements.queries import list_measurements
from service.measurements.schemas import MeasurementPage, MeasurementUploadReport
from service.price_sheets.sources import validate_source_name
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("measurements")
_Count = Annotated[int | None, QueryParameter(ge=1, le=100_000)]
_Name = Annotated[str | None, QueryParameter(description="where the file names none", max_length=200)]
_Gib = Annotated[
    float | None,
    QueryParameter(
        gt=0,
        le=100_000,
        description="torch.cuda.max_memory_* of the busiest GPU, GiB, where the file gives none",
    ),
]


@_API.post(
    "/measurements",
    operation_id="importMeasurements",
    problems=(401, 403, 413, 422),
    guards=[require_admin],
    request_max_body_size=MAX_UPLOAD_BYTES,
    status_code=201,
)
async def import_measurements_handler(
    store: NamedDependency[Store],
    body: RawBody,
    format: Annotated[MeasurementFormat, QueryParameter(description="the tool's result format")],
    source: Annotated[
        str, QueryParameter(description="name of these results; re-importing replaces them", max_length=64)
    ],
    gpu: _Name = None,
    model: _Name = None,
    gpu_count: _Count = None,
    tp: _Count = None,
    replicas: _Count = None,
    seq_len: Annotated[int | None, QueryParameter(ge=1, le=10_000_000)] = None,
    batch_size: _Count = None,
    precision: Annotated[str | None, QueryParameter(max_length=32)] = None,
    engine_version: Annotated[str | None, QueryParameter(max_length=64)] = None,
    engine: Annotated[
        str | None, QueryParameter(description="serving: the engine behind the endpoint", max_length=64)
    ] = None,
    task: Annotated[Literal["train", "fine_tune"] | None, QueryParameter()] = None,
    method: Annotated[Literal["full", "lora", "qlora"] | None, QueryParameter()] = None,
    max_memory_allocated_gib: _Gib = None,
    max_memory_reserved_gib: _Gib = None,
) -> Response[MeasurementUploadReport]:
    """Import a tool's result file as the new version of `source`: `vllm_bench` (`vllm bench serve
    --save-result` JSON), `sglang_bench` (`python -m sglang.bench_serving --output-file` JSON Lines),
    `aiperf` (AIPerf's `profile_export_aiperf.json`), `guidellm` (GuideLLM's `benchmarks.json`),
    `torchtitan_log`, `megatron_log` (Megatron-LM / NeMo), `hf_trainer` (`trainer_state.json` or
    `all_results.json`). The parameters give what the file does not state; a fact
    neither gives, or a file not of the format, is a 422 naming the field, and nothing is stored. 201 with
    the runs and the catalog rows they became. Needs `Authorization: Bearer <admin token>`."""
    name = validate_source_name(source)
    facts = UploadFacts(
        gpu=gpu,
        model=model,
        gpu_count=gpu_count,
        tp=tp,
        replicas=replicas,
        seq_len=seq_len,
        batch_size=batch_size,
        precision=precision,
        engine_version=engine_version,
        engine=engine,
        task=task,
        method=method,
        max_memory_allocated_gib=max_memory_allocated_gib,
        max_memory_reserved_gib=max_memory_reserved_gib,
    )
    report = await anyio.to_thread.run_sync(
        lambda: import_measurements(store, source=name, fmt=format, body=bytes(body), facts=facts)
    )
    return ReadableResponse(report, status_code=201)


@_API.get("/measurements", operation_id="listMeasurements")
def list_measurements_handler(
    store: NamedDependency[Store],
    source: Annotated[str | None, QueryParameter(max_length=64)] = None,
    history: Annotated[bool, QueryParameter(description="every version, not only the current ones")] = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> MeasurementPage:
    """Imported benchmark runs, newest version first: the current version of each source, or with
    `history=true` every version (replaced ones have `current: false`)."""
    return list_measurements(store, source=source, all_versions=history, limit=limit, offset=offset)


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (import_measurements_handler, list_measurements_handler)
"""The measurement handlers, in registration order."""
