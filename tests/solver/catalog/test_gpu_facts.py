"""GPU facts are data: every shipped row names its architecture, family, NVLink domain and formats,
they agree with what the hardware has, and a row without them is refused."""

from __future__ import annotations

import functools

import pytest

from service.db import seed_files
from service.db.gpu_rows import gpu_from_row, gpu_row
from service.db.seed_files import read_gpu_specs, seed_file_text
from solver.catalog.gpus import GpuSpec, node_gpus
from solver.catalog.precisions import ARCHITECTURES, precision_refusal
from solver.throughput.hardware import PRECISION_MULTIPLIER

_BF16 = frozenset({"ampere", "ada", "hopper", "blackwell", "cdna2", "cdna3", "cdna4"})
_FP8 = frozenset({"ada", "hopper", "blackwell", "cdna3", "cdna4"})
_FP4 = frozenset({"blackwell", "cdna4"})


@functools.cache
def _gpus() -> dict[str, GpuSpec]:
    return {gpu.gpu_id: gpu for gpu in read_gpu_specs()}


def test_every_shipped_gpu_has_its_facts() -> None:
    gpus = _gpus()
    assert len(gpus) == 56
    for gpu in gpus.values():
        assert gpu.architecture in ARCHITECTURES, gpu.name
        assert gpu.family and gpu.nvlink_domain >= 1 and "fp32" in gpu.precisions, gpu.name
        assert ("bf16" in gpu.precisions) == (gpu.architecture in _BF16), gpu.name
        assert ("fp8" in gpu.precisions) == (gpu.architecture in _FP8), gpu.name
        assert ("fp4" in gpu.precisions) == (gpu.architecture in _FP4), gpu.name
        if gpu.bf16_tflops is not None:
            assert gpu.fp16_tflops == gpu.bf16_tflops, gpu.name  # one 16-bit tensor rate where both exist


def test_volta_and_turing_have_an_fp16_peak_and_no_bf16() -> None:
    for gpu_id in (
        "v100-16gb",
        "v100-sxm2-32gb",
        "v100-pcie-32gb",
        "t4",
        "quadro-rtx-6000",
        "quadro-rtx-8000",
    ):
        gpu = _gpus()[gpu_id]
        assert gpu.bf16_tflops is None and gpu.fp16_tflops and "bf16" not in gpu.precisions
        assert gpu.tensor16_tflops == gpu.fp16_tflops
    assert _gpus()["v100-16gb"].fp16_tflops == 125 and _gpus()["t4"].fp16_tflops == 65


def test_every_format_a_gpu_lists_has_a_peak_ratio() -> None:
    for gpu in _gpus().values():
        ratios = PRECISION_MULTIPLIER.get(gpu.architecture)
        if ratios is None:  # no tensor cores: fp32 (and fp16 on Pascal/GCN5) at the proxied rate
            assert set(gpu.precisions) <= {"fp32", "fp16"}, gpu.name
            continue
        for fmt in gpu.precisions:
            assert ("bf16" if fmt == "fp16" else fmt) in ratios, (gpu.name, fmt)


def test_families_share_an_architecture_and_group_the_chips_they_did() -> None:
    by_family: dict[str, set[str]] = {}
    for gpu in _gpus().values():
        by_family.setdefault(gpu.family, set()).add(gpu.architecture)
    assert all(len(archs) == 1 for archs in by_family.values()), by_family
    gpus = _gpus()
    assert {g.gpu_id for g in gpus.values() if g.family == "ga100"} == {
        "a100-40gb-pcie",
        "a100-80gb-pcie",
        "a100-80gb-sxm",
        "a100-40gb-sxm",
        "a800-80gb-pcie",
    }
    assert gpus["gb300"].family == gpus["b200"].family == "gb100"
    assert gpus["rtx-4090"].family == "rtx-4090"  # a chip no other part shares in the grouping


def test_nvlink_domains_are_the_boards_and_racks() -> None:
    gpus = _gpus()
    assert gpus["gb200"].nvlink_domain == gpus["gb300"].nvlink_domain == 72
    assert all(gpus[g].nvlink_domain == 8 for g in ("h100-sxm", "b200", "a100-80gb-sxm", "mi300x"))
    assert gpus["h100-pcie"].nvlink_domain == 2 and gpus["rtx-4090"].nvlink_domain == 1
    assert node_gpus(gpus["gb200"]) == 72 and node_gpus(gpus["h100-pcie"]) == node_gpus(gpus["l4"]) == 8


@pytest.mark.parametrize(
    ("gpu_id", "precision", "training", "refusal"),
    [
        ("v100-16gb", "bf16", True, "V100 16GB has no bf16 tensor cores; it runs fp32, fp16"),
        ("v100-16gb", "fp16", True, None),
        ("v100-16gb", "nf4", True, None),  # QLoRA computes in 16 bit: fp16 on Volta
        ("v100-16gb", "int8", False, "V100 16GB has no int8 tensor cores; it runs fp32, fp16"),
        ("v100-16gb", "int8", True, None),  # a LoRA on an int8 base trains in 16 bit
        (
            "a100-80gb-sxm",
            "fp8",
            False,
            "A100 80GB SXM has no fp8 tensor cores; it runs fp32, fp16, bf16, int8",
        ),
        ("h100-sxm", "fp8", True, None),
        ("k80", "int4", False, "K80 has no bf16 or fp16 tensor cores; it runs fp32"),
        ("k80", "fp32", True, None),
    ],
)
def test_a_precision_refusal_names_what_the_gpu_runs(
    gpu_id: str, precision: str, training: bool, refusal: str | None
) -> None:
    assert precision_refusal(_gpus()[gpu_id], precision, training=training) == refusal


def test_a_row_without_its_facts_is_refused_naming_the_column(monkeypatch: pytest.MonkeyPatch) -> None:
    text = seed_file_text("gpu_specs.csv")
    header, first, *rest = text.splitlines()
    columns = header.split(",")
    cells = first.split(",")
    cells[columns.index("architecture")] = ""
    broken = "\n".join([header, ",".join(cells), *rest]) + "\n"
    monkeypatch.setattr(
        seed_files, "seed_file_text", lambda name: broken if name == "gpu_specs.csv" else text
    )
    with pytest.raises(ValueError, match=r"gpu_specs\.csv line 2, column architecture: empty"):
        read_gpu_specs()


def test_a_gpu_spec_checks_its_facts() -> None:
    v100 = _gpus()["v100-16gb"]
    with pytest.raises(ValueError, match="architecture 'fermi' is not one of"):
        GpuSpec(**{**_fields(v100), "architecture": "fermi"})
    with pytest.raises(ValueError, match="bf16 peak for a GPU without bf16"):
        GpuSpec(**{**_fields(v100), "bf16_tflops": 125.0})
    with pytest.raises(ValueError, match="must name fp32"):
        GpuSpec(**{**_fields(v100), "precisions": ("fp16",)})


def test_a_stored_row_round_trips_and_one_without_facts_is_refused() -> None:
    h100 = _gpus()["h100-sxm"]
    assert gpu_from_row(gpu_row(h100)) == h100
    stale = list(gpu_row(h100))
    stale[GpuSpec.__struct_fields__.index("architecture")] = None
    with pytest.raises(ValueError, match=r"stored GPU 'h100-sxm'.*architecture"):
        gpu_from_row(stale)


def _fields(gpu: GpuSpec) -> dict[str, object]:
    return {name: getattr(gpu, name) for name in GpuSpec.__struct_fields__}
