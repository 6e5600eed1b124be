"""Benchmark results as the tools write them, read into :class:`MeasuredRun` rows (issue 26).

One parser per format (:data:`MEASUREMENT_FORMATS`), each following its tool's own result schema; what a file does
not state comes from the upload's :class:`UploadFacts`, and a fact neither gives is a
:class:`~pricing.errors.MeasurementError` naming the upload parameter that would give it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal

from pricing.measurements.aiperf import parse_aiperf
from pricing.measurements.guidellm import parse_guidellm
from pricing.measurements.hf_trainer import parse_hf_trainer
from pricing.measurements.megatron_log import parse_megatron_log
from pricing.measurements.runs import MeasuredRun, RunKind, UploadFacts
from pricing.measurements.sglang_bench import parse_sglang_bench
from pricing.measurements.torchtitan_log import parse_torchtitan_log
from pricing.measurements.vllm_bench import parse_vllm_bench

__all__ = [
    "MEASUREMENT_FORMATS",
    "MeasuredRun",
    "MeasurementFormat",
    "RunKind",
    "UploadFacts",
    "parse_measurements",
]

MeasurementFormat = Literal[
    "vllm_bench", "sglang_bench", "aiperf", "guidellm", "torchtitan_log", "megatron_log", "hf_trainer"
]
MEASUREMENT_FORMATS: Final[dict[str, Callable[[bytes, UploadFacts], list[MeasuredRun]]]] = {
    "vllm_bench": parse_vllm_bench,
    "sglang_bench": parse_sglang_bench,
    "aiperf": parse_aiperf,
    "guidellm": parse_guidellm,
    "torchtitan_log": parse_torchtitan_log,
    "megatron_log": parse_megatron_log,
    "hf_trainer": parse_hf_trainer,
}
"""Each format's parser: ``vllm bench serve --save-result`` JSON, SGLang ``bench_serving --output-file``
JSON Lines, AIPerf's ``profile_export_aiperf.json``, GuideLLM's ``benchmarks.json``, a torchtitan training
log, a Megatron-LM / NeMo training log, a Hugging Face Trainer ``trainer_state.json`` / ``all_results.json``."""


def parse_measurements(fmt: MeasurementFormat, body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """The runs of one uploaded file of format ``fmt``."""
    return MEASUREMENT_FORMATS[fmt](body, facts)
