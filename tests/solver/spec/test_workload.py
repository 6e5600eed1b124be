"""Workload specs: decoding, defaults and the semantic checks that name their field."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.catalog.models import lookup_model
from solver.errors import InvalidWorkload, SolverError, UnknownModel
from solver.spec.workload import DEFAULT_SEQ_LEN, ModelSpec, ResolvedWorkload, Workload, resolve_workload

EXPLICIT = {
    "params_b": 7.0,
    "layers": 32,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "attention_heads": 32,
    "kv_heads": 8,
    "vocab_size": 32000,
}


def _decode(payload: dict[str, Any]) -> Workload:
    return msgspec.json.decode(msgspec.json.encode(payload), type=Workload)


def _resolve(**fields: Any) -> ResolvedWorkload:
    fields.setdefault("kind", "fine_tune")
    fields.setdefault("model", {"name": "Llama 2 7B"})
    return resolve_workload(_decode(fields))


def _field_of(**fields: Any) -> str:
    with pytest.raises(InvalidWorkload) as info:
        _resolve(**fields)
    return info.value.field


def test_defaults() -> None:
    rw = _resolve()
    assert (rw.precision, rw.method, rw.optimizer, rw.sharding, rw.recompute) == (
        "bf16",
        "full",
        "adamw",
        "none",
        "none",
    )
    assert (rw.batch_size, rw.gpu_count, rw.tp, rw.dp, rw.lora_rank) == (1, 1, 1, 1, 8)
    assert rw.seq_len == DEFAULT_SEQ_LEN
    assert rw.arch is lookup_model("Llama 2 7B")
    assert not rw.is_inference
    assert (rw.attention, rw.master_weights, rw.offload, rw.optimizer_in_backward) == (
        "flash",
        "fp32",
        "none",
        False,
    )
    assert (rw.lora_targets, rw.lora_dropout, rw.gradient_accumulation_steps) == ((), 0.0, 1)
    assert _resolve(method="lora").lora_targets == ("q_proj", "v_proj")


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ("qkv", ("q_proj", "k_proj", "v_proj")),
        ("attention", ("q_proj", "k_proj", "v_proj", "o_proj")),
        ("mlp", ("gate_proj", "up_proj", "down_proj")),
        (["down_proj", "q_proj", "q"], ("q_proj", "down_proj")),
        (
            ["wq", "wk", "wv", "wo", "w1", "w2", "w3"],
            ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
        ),
        (["query_key_value", "gate_up_proj"], ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj")),
        ([" Query ", "VALUE"], ("q_proj", "v_proj")),
    ],
)
def test_lora_targets_resolve_to_module_names(targets: Any, expected: tuple[str, ...]) -> None:
    assert _resolve(method="lora", lora_targets=targets).lora_targets == expected


def test_plain_mlp_models_have_no_gate_projection() -> None:
    gptj = {"name": "GPT-J 6B"}
    assert _resolve(model=gptj, method="lora", lora_targets="mlp").lora_targets == ("up_proj", "down_proj")
    assert "gate_proj" not in _resolve(model=gptj, method="lora", lora_targets="all_linear").lora_targets
    assert _resolve(model=gptj, method="lora", lora_targets=["fc1", "fc2"]).lora_targets == (
        "up_proj",
        "down_proj",
    )
    with pytest.raises(InvalidWorkload, match="plain two-matrix MLP") as info:
        _resolve(model=gptj, method="lora", lora_targets=["gate_proj"])
    assert info.value.field == "lora_targets"


def test_unknown_lora_module_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidWorkload) as info:
        _resolve(method="lora", lora_targets=["q_proj", "lm_head"])
    assert info.value.field == "lora_targets"
    assert "'lm_head'" in info.value.message
    for module in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
        assert module in info.value.message


def test_default_seq_len_is_capped_by_the_model() -> None:
    assert _resolve(model={"name": "bert-large-uncased"}).seq_len == 512
    assert _resolve(model={"name": "resnet50"}).seq_len == 0


def test_explicit_architecture() -> None:
    rw = _resolve(model=EXPLICIT, seq_len=4096)
    assert rw.arch.name == "custom"
    assert rw.arch.params_b == 7.0
    assert rw.arch.kv_heads == 8
    assert rw.seq_len == 4096


def test_unknown_fields_are_rejected_at_decode() -> None:
    with pytest.raises(msgspec.ValidationError, match="batchsize"):
        _decode({"kind": "train", "model": {"name": "Llama 2 7B"}, "batchsize": 4})
    with pytest.raises(msgspec.ValidationError, match="model"):
        _decode({"kind": "train", "model": {"name": "Llama 2 7B", "size": 7}})


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"kind": "train", "model": {"name": "x"}, "batch_size": 0}, "batch_size"),
        ({"kind": "train", "model": {"name": "x"}, "precision": "fp64"}, "precision"),
        ({"kind": "pretrain", "model": {"name": "x"}}, "kind"),
        ({"kind": "train", "model": {"name": ""}}, "model.name"),
        ({"kind": "train", "model": {"params_b": -1}}, "model.params_b"),
        ({"kind": "train", "model": {"name": "x"}, "attention": "sdpa"}, "attention"),
        ({"kind": "train", "model": {"name": "x"}, "master_weights": "bf16"}, "master_weights"),
        ({"kind": "train", "model": {"name": "x"}, "optimizer": "adam"}, "optimizer"),
        ({"kind": "train", "model": {"name": "x"}, "offload": "nvme"}, "offload"),
        ({"kind": "train", "model": {"name": "x"}, "lora_targets": "everything"}, "lora_targets"),
        ({"kind": "train", "model": {"name": "x"}, "lora_targets": [""]}, "lora_targets"),
        ({"kind": "train", "model": {"name": "x"}, "lora_dropout": 1.0}, "lora_dropout"),
        (
            {"kind": "train", "model": {"name": "x"}, "gradient_accumulation_steps": 0},
            "gradient_accumulation_steps",
        ),
        ({"kind": "train", "model": {"name": "x"}, "optimizer_in_backward": "yes"}, "optimizer_in_backward"),
    ],
)
def test_types_and_bounds_are_checked_at_decode(payload: dict[str, Any], path: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=path.replace(".", r"\.")):
        _decode(payload)


def test_schema_documents_fields() -> None:
    _, components = msgspec.json.schema_components([Workload])
    properties = components["Workload"]["properties"]
    assert "description" in properties["seq_len"]["anyOf"][0]
    assert properties["batch_size"]["anyOf"][0]["minimum"] == 1  # optional: the planner's when left out
    assert components["Workload"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"model": {"name": "Llama 2 7B", "layers": 32}}, "model"),
        ({"model": {}}, "model"),
        ({"model": {k: v for k, v in EXPLICIT.items() if k != "vocab_size"}}, "model.vocab_size"),
        ({"model": {**EXPLICIT, "kv_heads": 5}}, "model.kv_heads"),
        ({"model": {**EXPLICIT, "attention_heads": 31, "kv_heads": 1}}, "model.attention_heads"),
        ({"model": {**EXPLICIT, "experts": 2, "active_experts": 4}}, "model.active_experts"),
        ({"model": {**EXPLICIT, "active_params_b": 9.0}}, "model.active_params_b"),
        ({"method": "qlora", "precision": "bf16"}, "precision"),
        ({"kind": "train", "method": "lora"}, "method"),
        ({"precision": "int4"}, "precision"),
        ({"seq_len": 8192}, "seq_len"),
        ({"tp": 2}, "tp"),
        ({"tp": 2, "gpu_count": 3}, "gpu_count"),
        ({"tp": 3, "gpu_count": 3}, "tp"),
        ({"model": {"name": "BERT-base"}, "method": "lora", "lora_rank": 1024}, "lora_rank"),
        ({"model": {"name": "resnet50"}, "method": "lora"}, "method"),
        ({"model": {"name": "resnet50"}, "tp": 2, "gpu_count": 2}, "tp"),
        ({"optimizer_in_backward": True, "gradient_accumulation_steps": 4}, "optimizer_in_backward"),
        ({"method": "lora", "lora_targets": []}, "lora_targets"),
        ({"method": "lora", "lora_targets": ["attn"]}, "lora_targets"),
    ],
)
def test_semantic_errors_name_their_field(fields: dict[str, Any], field: str) -> None:
    assert _field_of(**fields) == field


def test_unknown_model_is_an_invalid_workload_on_model_name() -> None:
    with pytest.raises(UnknownModel) as info:
        _resolve(model={"name": "Llama 3 9B"})
    assert info.value.field == "model.name"
    assert info.value.suggestions
    assert isinstance(info.value, SolverError)
    assert "model.name" in str(info.value)
    assert "UnknownModel" in repr(info.value)


def test_values_built_in_python_are_checked_too() -> None:
    workload = Workload(kind="train", model=ModelSpec(name="Llama 2 7B"), batch_size=0)
    with pytest.raises(InvalidWorkload) as info:
        resolve_workload(workload)
    assert info.value.field == "batch_size"
    blank = Workload(kind="train", model=ModelSpec(name="  "))
    with pytest.raises(InvalidWorkload, match=r"model\.name"):
        resolve_workload(blank)
    negative = Workload(kind="train", model=ModelSpec(**{**EXPLICIT, "layers": 0}))
    with pytest.raises(InvalidWorkload) as info:
        resolve_workload(negative)
    assert info.value.field == "model.layers"


def test_settings_that_do_not_apply_are_accepted() -> None:
    assert _resolve(sharding="zero3").dp == 1
    serving = _resolve(
        kind="serving",
        optimizer="sgd",
        recompute="full",
        precision="int4",
        offload="optimizer",
        optimizer_in_backward=True,
        gradient_accumulation_steps=8,
    )
    assert serving.is_inference
    assert _resolve(kind="batch_inference", method="qlora", precision="nf4").method == "qlora"


def test_layout() -> None:
    rw = _resolve(gpu_count=8, tp=2, sharding="zero2")
    assert (rw.gpu_count, rw.tp, rw.dp) == (8, 2, 4)


def test_invalid_workload_carries_field_and_message() -> None:
    error = InvalidWorkload("seq_len", "too long")
    assert (error.field, error.message) == ("seq_len", "too long")
    assert str(error) == "seq_len: too long"
    assert repr(error) == "InvalidWorkload(field='seq_len', message='too long')"


@given(
    kind=st.sampled_from(["train", "fine_tune", "batch_inference", "serving"]),
    name=st.sampled_from(["Llama 2 7B", "Llama 3 70B", "Mixtral 8x7B", "Qwen2.5-7B", "GPT-J 6B"]),
    batch=st.integers(1, 64),
    seq_len=st.integers(1, 2048),
    tp_exp=st.integers(0, 2),
    dp=st.integers(1, 8),
)
def test_valid_workloads_resolve(
    kind: str, name: str, batch: int, seq_len: int, tp_exp: int, dp: int
) -> None:
    tp = 2**tp_exp
    rw = _resolve(
        kind=kind, model={"name": name}, batch_size=batch, seq_len=seq_len, tp=tp, gpu_count=tp * dp
    )
    assert rw.dp * rw.tp == rw.gpu_count
    assert rw.seq_len == seq_len
