"""Hugging Face Trainer results: ``trainer_state.json`` (``TrainerState.save_to_json``) or
``all_results.json`` / ``train_results.json`` (``Trainer.save_metrics``).

The training summary is the metrics dictionary ``Trainer.train`` returns and logs last:
``train_runtime`` (seconds), ``train_samples_per_second`` (all processes together), ``total_flos``
(``floating_point_ops`` summed over the run), ``epoch``; ``trainer_state.json`` keeps it as the last
``log_history`` entry with ``train_runtime``, beside ``train_batch_size`` (per device),
``global_step`` and ``num_input_tokens_seen`` (counted when ``include_num_input_tokens_seen`` is on).
Tokens/s over the run's GPUs: ``num_input_tokens_seen / train_runtime`` where counted, else
``train_samples_per_second × seq_len`` (the upload's ``seq_len``: the Trainer does not record it).
Achieved TFLOPS per GPU: ``total_flos / train_runtime / GPUs``. The GPU, the model and the number of GPUs
come from the upload; the task defaults to ``fine_tune``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pricing.errors import MeasurementError
from pricing.measurements.runs import MeasuredRun, UploadFacts, require, training_run
from pricing.measurements.vllm_bench import read_json_objects

__all__ = ["parse_hf_trainer"]


def _summary(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The training summary: the document itself (``all_results.json``) or its last log entry with one."""
    if "train_runtime" in data:
        return data
    history = data.get("log_history")
    if not isinstance(history, list):
        raise MeasurementError(
            "file", "not a Hugging Face Trainer result: no 'train_runtime' and no 'log_history'"
        )
    summaries = [entry for entry in history if isinstance(entry, dict) and "train_runtime" in entry]
    if not summaries:
        raise MeasurementError(
            "file", "the log_history has no training summary ('train_runtime'): did training finish?"
        )
    return summaries[-1]


def _positive(summary: Mapping[str, Any], key: str) -> float | None:
    value = summary.get(key)
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
    )


def parse_hf_trainer(body: bytes, facts: UploadFacts) -> list[MeasuredRun]:
    """The run of one Trainer result file (module docstring)."""
    (data,) = read_json_objects(body, "Hugging Face Trainer")[:1]
    summary = _summary(data)
    runtime = _positive(summary, "train_runtime")
    if runtime is None:
        raise MeasurementError("file", "'train_runtime' is not a positive number of seconds")
    count = require(facts.gpu_count, "gpu_count", "the number of GPUs")
    seen = _positive(data, "num_input_tokens_seen") or _positive(summary, "num_input_tokens_seen")
    if seen is not None:
        tokens_per_s = seen / runtime
    else:
        samples = _positive(summary, "train_samples_per_second")
        if samples is None:
            raise MeasurementError("file", "neither 'num_input_tokens_seen' nor 'train_samples_per_second'")
        tokens_per_s = samples * require(facts.seq_len, "seq_len", "the sequence length")
    flos = _positive(summary, "total_flos") or _positive(data, "total_flos")
    batch = data.get("train_batch_size")
    return [
        training_run(
            facts,
            tool="hf_trainer",
            engine="transformers",
            default_task="fine_tune",
            gpu_count=count,
            batch_size=batch if isinstance(batch, int) and not isinstance(batch, bool) else None,
            tokens_per_s=tokens_per_s,
            tflops_per_gpu=flos / runtime / count / 1e12 if flos is not None else None,
            steps=data.get("global_step") if isinstance(data.get("global_step"), int) else None,
        )
    ]
