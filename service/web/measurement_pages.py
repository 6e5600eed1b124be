"""The measurements page: every imported benchmark run (each version; the current ones marked) and an
upload form for a tool's result file (the admin token is typed into the page and kept only in the
page's memory)."""

from __future__ import annotations

from typing import Final, get_args

from litestar import Response, get
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from pricing import MeasurementFormat
from service.db.store import Store
from service.measurements.queries import list_measurements
from service.web.render import page

__all__ = ["MEASUREMENT_PAGES"]

_FACTS: Final = (
    ("gpu", "GPU", "where the file names none", "text"),
    ("model", "Model", "where the file names none", "text"),
    ("gpu_count", "GPUs", "training: where the log names no mesh", "number"),
    ("tp", "Tensor parallel", "GPUs per replica", "number"),
    ("replicas", "Replicas", "serving: replicas the load was spread over", "number"),
    ("seq_len", "Sequence length", "training", "number"),
    ("batch_size", "Micro-batch", "training, per GPU", "number"),
    ("precision", "Precision", "default bf16", "text"),
    ("engine", "Engine", "serving: behind an AIPerf or GuideLLM endpoint", "text"),
    ("task", "Task", "training: train or fine_tune", "text"),
    ("method", "Method", "training: full, lora or qlora", "text"),
    (
        "max_memory_reserved_gib",
        "Peak memory, GiB",
        "torch.cuda.max_memory_reserved, where the file gives none",
        "decimal",
    ),
)


@get("/measurements", include_in_schema=False, sync_to_thread=True)
def measurements_page(store: NamedDependency[Store]) -> Response[str]:
    """Every imported run, newest version first, and the upload form."""
    runs = list_measurements(store, all_versions=True, limit=500).items
    return page("measurements.html", runs=runs, formats=get_args(MeasurementFormat), facts=_FACTS)


MEASUREMENT_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (measurements_page,)
