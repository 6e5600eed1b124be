"""What a job moves, keeps and risks: defaults derived from the workload, given values kept."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from solver.costs.job_terms import job_terms
from solver.memory.model_state import weight_bytes
from solver.spec.terms import DataSpec, ReliabilitySpec
from solver.spec.workload import Workload, resolve_workload


def _resolved(**fields: Any) -> Any:
    return resolve_workload(msgspec.convert(fields, Workload))


def test_pretraining_downloads_no_weights_and_checkpoints_its_whole_state() -> None:
    rw = _resolved(kind="train", model={"name": "Llama 3.2 1B"}, seq_len=2048)
    made = job_terms(
        rw, tokens=10**10, samples=None, epochs=2.0, output_len=None, data=None, reliability=None
    )
    terms = made.terms
    assert terms.dataset_gb == pytest.approx(5e9 * 4 / 1e9)  # 5e9 unique tokens, 128k vocabulary: 4-byte ids
    assert terms.download_gb == terms.dataset_gb  # random initial weights
    params = rw.arch.params_b * 1e9
    assert terms.checkpoint_gb == pytest.approx(params * (2 + 4 + 8) / 1e9)  # bf16 + fp32 master + Adam
    assert terms.checkpoints_kept == 2 and terms.loses_work
    assert terms.egress_gb == pytest.approx(rw.arch.params_b * 2)
    assert set(made.rules) == {"dataset_gb", "checkpoint_gb", "egress_gb", "model_download_gb"}


def test_lora_checkpoints_only_its_adapters_and_downloads_the_base() -> None:
    rw = _resolved(kind="fine_tune", model={"name": "Llama 3.1 8B"}, method="lora", seq_len=2048)
    terms = job_terms(
        rw, tokens=10**9, samples=None, epochs=1.0, output_len=None, data=None, reliability=None
    ).terms
    assert terms.checkpoint_gb < 1.0 < terms.download_gb
    assert terms.download_gb == pytest.approx(weight_bytes(rw) / 1e9 + terms.dataset_gb)


def test_batch_inference_checkpoints_nothing_and_keeps_its_outputs() -> None:
    rw = _resolved(kind="batch_inference", model={"name": "Llama 3.1 8B"}, seq_len=1024)
    made = job_terms(
        rw,
        tokens=10**8,
        samples=None,
        epochs=1.0,
        output_len=256,
        data=DataSpec(checkpoint_gb=50.0),
        reliability=None,
    )
    assert made.terms.checkpoint_gb == 0 and not made.terms.loses_work
    assert made.terms.dataset_gb == pytest.approx(10**8 / 256 * 768 * 4 / 1e9)
    assert made.terms.egress_gb == pytest.approx(10**8 * 4 / 1e9)
    assert "not used" in made.rules["checkpoint_gb"]


def test_given_values_replace_the_defaults_and_are_labelled_given() -> None:
    rw = _resolved(kind="train", model={"name": "Llama 3.2 1B"}, seq_len=2048)
    made = job_terms(
        rw,
        tokens=10**10,
        samples=None,
        epochs=1.0,
        output_len=None,
        data=DataSpec(dataset_gb=1.5, checkpoint_gb=3.0, checkpoint_every_hours=2.0, egress_gb=0.0),
        reliability=ReliabilitySpec(
            interruptions_per_gpu_hour=1e-4, restart_minutes=30, preemptions_per_hour=0.2
        ),
    )
    terms = made.terms
    assert (terms.dataset_gb, terms.checkpoint_gb, terms.egress_gb, terms.checkpoint_every_hours) == (
        1.5,
        3.0,
        0.0,
        2.0,
    )
    assert (terms.interruptions_per_gpu_hour, terms.restart_hours, terms.preemptions_per_hour) == (
        1e-4,
        0.5,
        0.2,
    )
    assert made.rules["dataset_gb"] == made.rules["checkpoint_gb"] == made.rules["egress_gb"] == "given"


def test_images_without_a_dataset_size_are_imagenet_sized_jpegs() -> None:
    """Issue 24: an image dataset of unstated size was "unknown (0)"; ImageNet-1k is 138 GB."""
    rw = _resolved(kind="train", model={"name": "ResNet-50"}, batch_size=64)
    made = job_terms(
        rw, tokens=None, samples=1_281_167, epochs=90, output_len=None, data=None, reliability=None
    )
    assert made.terms.dataset_gb == pytest.approx(138.0)
    assert made.rules["dataset_gb"].startswith("derived: 1,281,167 images × 108 kB")


def test_samples_without_a_sequence_length_stay_zero_and_say_so() -> None:
    rw = _resolved(kind="train", model={"name": "ResNet-50"}, batch_size=64)
    made = job_terms(rw, tokens=None, samples=None, epochs=1, output_len=None, data=None, reliability=None)
    assert made.terms.dataset_gb == 0 and "not derivable" in made.rules["dataset_gb"]
