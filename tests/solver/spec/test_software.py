"""The software checks: requirements implied by precision, and which GPUs a table lets run them."""

from __future__ import annotations

import msgspec
import pytest

from solver.catalog.gpus import GpuSpec
from solver.spec.software import (
    REQUIREMENTS,
    Need,
    SoftwareIndex,
    SoftwareSpec,
    SupportRow,
    SupportTable,
    implied_requirements,
    needs_of,
)
from solver.spec.workload import ResolvedWorkload, Workload, resolve_workload
from tests.gpu_facts import facts

H100 = GpuSpec(gpu_id="h100-sxm", name="H100 SXM", vendor="NVIDIA", memory_gib=80, **facts("h100-sxm"))
A100 = GpuSpec(
    gpu_id="a100-80gb-sxm", name="A100 80GB SXM", vendor="NVIDIA", memory_gib=80, **facts("a100-80gb-sxm")
)
MI300X = GpuSpec(gpu_id="mi300x", name="MI300X", vendor="AMD", memory_gib=192, **facts("mi300x"))
K80 = GpuSpec(gpu_id="k80", name="K80", vendor="NVIDIA", memory_gib=12, **facts("k80"))
FA_URL = "https://github.com/Dao-AILab/flash-attention"
TABLE = SupportTable(
    [
        SupportRow(
            requirement="flash_attention_3",
            vendor="NVIDIA",
            architecture="hopper",
            min_version="flash-attn 3.0.0b1",
            note="",
            source=FA_URL,
        ),
        *(
            SupportRow(
                requirement="flash_attention_2",
                vendor=v,
                architecture=a,
                min_version="",
                note="",
                source=FA_URL,
            )
            for v, a in (("NVIDIA", "ampere"), ("NVIDIA", "hopper"), ("AMD", "cdna3"))
        ),
    ]
)
INDEX = SoftwareIndex(TABLE, {g.gpu_id: g for g in (H100, A100, MI300X, K80)})


def _job(**fields: object) -> ResolvedWorkload:
    body = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, **fields}
    return resolve_workload(msgspec.convert(body, Workload))


def test_each_gpu_supports_what_its_architecture_and_vendor_rows_say() -> None:
    assert INDEX.gpus["h100-sxm"].supports == ("flash_attention_2", "flash_attention_3")
    assert INDEX.gpus["a100-80gb-sxm"].supports == ("flash_attention_2",)
    assert INDEX.gpus["mi300x"].stack == "rocm" and INDEX.gpus["mi300x"].architecture == "cdna3"
    assert INDEX.gpus["h100-sxm"].stack == "cuda"
    assert INDEX.gpus["k80"].supports == () and INDEX.gpus["k80"].architecture == "kepler"


def test_flash_attention_3_rejects_pre_hopper_naming_where_it_runs() -> None:
    needs = [Need("flash_attention_3", "")]
    assert INDEX.missing(H100, needs, "any") is None
    why = INDEX.missing(A100, needs, "any")
    assert why == "needs flash_attention_3, which runs on NVIDIA Hopper (H100 SXM); this is NVIDIA Ampere"
    assert INDEX.missing(MI300X, needs, "any") is not None


def test_stack_cuda_rejects_amd_and_rocm_rejects_nvidia() -> None:
    assert INDEX.missing(MI300X, [], "cuda") == "needs the cuda stack; this AMD GPU runs rocm"
    assert INDEX.missing(H100, [], "cuda") is None
    assert INDEX.missing(H100, [], "rocm") == "needs the rocm stack; this NVIDIA GPU runs cuda"
    assert INDEX.missing(MI300X, [Need("flash_attention_2", "")], "rocm") is None


def test_every_missing_piece_is_named() -> None:
    why = INDEX.missing(MI300X, [Need("flash_attention_2", ""), Need("flash_attention_3", "")], "cuda")
    assert why is not None
    assert why.startswith("needs the cuda stack") and "needs flash_attention_3" in why
    assert "flash_attention_2" not in why.replace("needs flash_attention_3", "")


def test_a_gpu_of_unknown_architecture_runs_no_requirement() -> None:
    mystery = GpuSpec(
        gpu_id="mystery-9000",
        name="Mystery",
        vendor="NVIDIA",
        memory_gib=8,
        **facts("a100-80gb-sxm", family="mystery-9000"),
    )
    why = INDEX.missing(mystery, [Need("flash_attention_2", "")], "any")
    assert why is not None and "architecture is not in the compatibility table" in why
    assert INDEX.missing(mystery, [], "cuda") is None


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, []),
        ({"precision": "nf4", "method": "qlora"}, [Need("bitsandbytes", "implied by precision nf4")]),
        ({"precision": "int4", "method": "qlora"}, [Need("bitsandbytes", "implied by method qlora")]),
        ({"precision": "fp8"}, [Need("fp8_training", "implied by precision fp8")]),
        ({"optimizer": "paged_adamw_8bit"}, [Need("bitsandbytes", "implied by optimizer paged_adamw_8bit")]),
        (
            {"kind": "batch_inference", "precision": "fp8"},
            [Need("fp8_inference", "implied by precision fp8")],
        ),
        ({"kind": "serving", "precision": "nf4"}, [Need("bitsandbytes", "implied by precision nf4")]),
        ({"kind": "batch_inference", "optimizer": "adamw_8bit"}, []),  # an optimizer does not apply
    ],
)
def test_precision_method_and_optimizer_imply_requirements(
    fields: dict[str, object], expected: list[Need]
) -> None:
    assert implied_requirements(_job(**fields)) == expected


def test_stated_requirements_come_first_and_each_once() -> None:
    spec = SoftwareSpec(requires=["fp8_training", "vllm"])
    needs = needs_of(spec, _job(precision="fp8"))
    assert needs == (Need("fp8_training", ""), Need("vllm", ""))
    assert needs_of(None, _job()) == ()


def test_requirement_names_are_a_closed_list_in_the_schema() -> None:
    with pytest.raises(msgspec.ValidationError, match="requires"):
        msgspec.convert({"requires": ["flash_attention_9"]}, SoftwareSpec)
    with pytest.raises(msgspec.ValidationError, match="stack"):
        msgspec.convert({"stack": "metal"}, SoftwareSpec)
    assert set(REQUIREMENTS) >= {"bitsandbytes", "flash_attention_3", "vllm", "sglang", "tensorrt_llm"}
